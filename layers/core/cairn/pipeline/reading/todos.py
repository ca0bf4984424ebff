"""The agent's todo lists (Claude Code `TodoWrite`, Codex `update_plan`, ...) and what each left open."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.tools import calls_tool
from cairn.transcripts.tools import TODO_TOOLS

ITEM_CHARS = 200
DONE = ("completed", "done")


@dataclass(frozen=True, slots=True)
class TodoList:
    event: EventDoc  # the tool call that wrote the list
    open_items: tuple[str, ...]  # its items not completed, in order
    done_items: tuple[str, ...] = ()  # its items completed, in order: what a later dream pass closes with


def todo_lists(events: Sequence[EventDoc]) -> tuple[TodoList, ...]:
    """Every todo list the session wrote, in order (each call rewrites the whole list)."""
    return tuple(
        TodoList(e, _open_items(e.tool_input), _items(e.tool_input, done=True))  # type: ignore[arg-type]
        for e in events
        if calls_tool(e, TODO_TOOLS) and isinstance(e.tool_input, dict)
    )


def _open_items(tool_input: dict) -> tuple[str, ...]:
    return _items(tool_input, done=False)


def _items(tool_input: dict, done: bool) -> tuple[str, ...]:
    items = tool_input.get("todos") or tool_input.get("plan") or []
    return tuple(
        str(i.get("content") or i.get("step"))[:ITEM_CHARS]
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict) and (i.get("status") in DONE) is done and (i.get("content") or i.get("step"))
    )

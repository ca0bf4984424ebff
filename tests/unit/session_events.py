"""Pipeline events as a transcript's parse gives them, for tests: a tool call and its result."""

from __future__ import annotations

from cairn.pipeline.models import EventDoc
from cairn.transcripts.model import Role


def tool_run(seq: int, tool: str, tool_input: dict, output: str, error: bool = False) -> list[EventDoc]:
    """A call of `tool` on line `seq` and its result on the next line."""
    call = EventDoc(
        seq=seq,
        line_no=seq,
        role=Role.TOOL_CALL,
        tool_name=tool,
        tool_input=tool_input,
        tool_call_id=f"c{seq}",
    )
    result = EventDoc(
        seq=seq + 1,
        line_no=seq + 1,
        role=Role.TOOL_RESULT,
        text=output,
        tool_call_id=f"c{seq}",
        is_error=error,
    )
    return [call, result]


def ran(
    seq: int, command: str, output: str, error: bool = False, description: str | None = None
) -> list[EventDoc]:
    """A shell command (Claude Code's Bash, with the agent's description when given) and its output."""
    args = {"command": command, **({"description": description} if description else {})}
    return tool_run(seq, "Bash", args, output, error)

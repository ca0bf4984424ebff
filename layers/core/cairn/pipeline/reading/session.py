"""A session read once: its events and everything the learners and the reflection ask of them.

`read_session` runs each reader over the whole session exactly once (shell calls paired with their
results, turns, the folders it worked in, git's last word, todo lists, the errors it never fixed);
every session-level learner and the reflection take the one `SessionReading` and never re-read the
raw events.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.pipeline.models import EventDoc, EventsDoc
from cairn.pipeline.reading.edited_values import edited_out, taken_out_after
from cairn.pipeline.reading.failures import unresolved_errors
from cairn.pipeline.reading.git_state import Tree, git_state, tree_state, uncommitted_edits
from cairn.pipeline.reading.shell import ShellCall, checkouts, shell_calls
from cairn.pipeline.reading.steps import written_by
from cairn.pipeline.reading.todos import TodoList, todo_lists
from cairn.pipeline.reading.turns import Turn, turns
from cairn.project_files import ProjectFile


@dataclass(frozen=True, slots=True)
class SessionReading:
    events: list[EventDoc]
    cwd: str | None
    project_files: tuple[ProjectFile, ...]
    shell_calls: tuple[ShellCall, ...]  # every thread's, in order, each with its result
    turns: tuple[Turn, ...]
    checkouts: tuple[str, ...]  # the folders it worked in, deepest first
    git_state: str | None  # what its last `git status` left unsettled
    tree: Tree | None  # the paths its last plain `git status` of its checkout listed as not committed
    uncommitted: tuple[str, ...]  # the files it edited in its checkout after its last commit
    edited_out: tuple[str, ...]  # the values (a number with its unit, a URL) its edits took out of files
    # from a point of the session (an event's `seq`) on, the values its later edits took out
    taken_out: Callable[[int], frozenset[str]]
    todo_lists: tuple[TodoList, ...]
    unresolved: tuple[dict[str, Any], ...]  # commands whose last run failed for real
    own: frozenset[str]  # the files its sub-agents wrote, which its events do not show (`steps.written_by`)

    def thread_calls(self, sidechain: bool) -> list[ShellCall]:
        """The shell calls of the main thread (False) or of the sub-agents (True)."""
        return [c for c in self.shell_calls if c.call.is_sidechain is sidechain]


def read_session(doc: EventsDoc) -> SessionReading:
    return read_events(doc.events, doc.cwd, doc.project_files, written_by(doc.subagent_calls, doc.cwd))


def read_events(
    events: Sequence[EventDoc],
    cwd: str | None = None,
    project_files: Sequence[ProjectFile] = (),
    own: Collection[str] = (),
) -> SessionReading:
    events = list(events)
    calls = tuple(shell_calls(events))
    roots = checkouts(events, cwd)
    return SessionReading(
        events=events,
        cwd=cwd,
        project_files=tuple(project_files),
        shell_calls=calls,
        turns=tuple(turns(events)),
        checkouts=roots,
        git_state=git_state(calls),
        tree=tree_state(calls, cwd),
        uncommitted=uncommitted_edits(events, calls, roots),
        edited_out=edited_out(events),
        taken_out=taken_out_after(events),
        todo_lists=todo_lists(events),
        unresolved=tuple(unresolved_errors(calls)),
        own=frozenset(own),
    )

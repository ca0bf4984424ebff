"""The handoff says what git reported of unfinished work at the end (pipeline.reflect.git_state)."""

from __future__ import annotations

import pytest
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reflect import git_state
from cairn.transcripts.model import Role

pytestmark = pytest.mark.unit


def ran(seq, command, output) -> list[EventDoc]:
    call = EventDoc(
        seq=seq,
        line_no=seq,
        role=Role.TOOL_CALL,
        tool_name="Bash",
        tool_input={"command": command},
        tool_call_id=f"c{seq}",
    )
    return [
        call,
        EventDoc(seq=seq + 1, line_no=seq + 1, role=Role.TOOL_RESULT, text=output, tool_call_id=f"c{seq}"),
    ]


STATUS = (
    "On branch main\nYour branch is ahead of 'origin/main' by 2 commits.\n"
    "Changes not staged for commit:\n  a.go"
)


def test_the_last_git_status_tells_what_was_left_uncommitted_or_unpushed():
    state = git_state(ran(1, "git status", STATUS))
    assert state is not None and "ahead" in state and "Changes not staged" in state


def test_a_status_followed_by_a_commit_says_nothing_stale():
    assert git_state([*ran(1, "git status", STATUS), *ran(3, "git commit -m x", "[main abc1234] x")]) is None

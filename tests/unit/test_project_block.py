"""The block's rules for a project's life (services.project_block): commands merged across sessions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cairn.domain.models import Memory, MemoryKind, Provenance
from cairn.services.project_block import kept_commands, passed_commands, program, worked_past

pytestmark = pytest.mark.unit


def memory(session: str, content: str = "", minute: int = 0, **details) -> Memory:
    return Memory(
        id=f"mem_{session}_{minute}",
        team_id="t",
        kind=MemoryKind.PROCEDURE,
        content=content,
        tags=("checks", "command") if content.startswith("Checks") else (),
        details=details,
        provenance=Provenance(session_id=session),
        created_at=datetime(2026, 1, 1, 0, minute, tzinfo=UTC),
    )


def test_a_build_run_through_another_path_to_its_program_is_one_command_counted_per_session():
    found = kept_commands(
        [
            memory("s1", "Checks run:\n- build: `/usr/local/go/bin/go build ./cmd/api/ 2>&1 | tail -3`", 1),
            memory("s2", "Checks run:\n- build: `go build ./cmd/api/`\n- test: `ssh app@h 'curl -s x'`", 2),
            memory("s2", "", 3, command="cd go && cargo build --release && md5sum x", category="build"),
        ]
    )
    assert [(k.command, len(k.sessions)) for k in found] == [
        ("go build ./cmd/api/", 2),
        ("cargo build --release", 1),
    ]


def test_an_error_of_a_command_that_passed_from_the_right_folder_was_worked_past():
    passed = passed_commands([memory("s2", "Checks run:\n- build: `go build ./cmd/api/`")])
    wrong_folder = memory("s2", command="go build ./go/cmd/api/ 2>&1")
    other_target = memory("s2", command="go build ./cmd/worker/")
    other_session = memory("s1", command="go build ./go/cmd/api/")
    assert worked_past(wrong_folder, passed)
    assert not worked_past(other_target, passed) and not worked_past(other_session, passed)


def test_the_program_is_read_past_wrappers_and_environment():
    assert program("timeout 10 curl -s http://x") == "curl"
    assert program("GOOS=linux sudo /usr/bin/mix test") == "mix"

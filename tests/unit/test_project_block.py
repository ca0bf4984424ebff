"""The block's rules for a project's life (services.project_block): commands merged across sessions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from cairn.domain.models import Memory, MemoryKind, Provenance
from cairn.services.project_block import (
    fact_names,
    fact_values,
    fact_weights,
    kept_commands,
    latest_session,
    passed_commands,
    program,
    session_ages,
    worked_past,
    written_order,
)

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


def test_the_projects_own_script_keeps_its_path_and_an_installed_program_is_named():
    found = kept_commands(
        [
            memory("s1", "Checks run:\n- test: `./deploy.sh release`\n- build: `./node_modules/.bin/tsc`", 1),
            memory("s2", "Checks run:\n- test: `cd app && .venv/bin/pytest -q`\n- test: `./gradlew test`", 2),
        ]
    )
    assert {k.command for k in found} == {"./deploy.sh release", "tsc", "pytest -q", "./gradlew test"}


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


def fact(session: str, content: str, minute: int, **details) -> Memory:
    return Memory(
        id=f"fact_{session}_{minute}",
        team_id="t",
        kind=MemoryKind.FACT,
        content=content,
        tags=("reported",),
        details={"source": "agent", **details},
        provenance=Provenance(session_id=session),
        created_at=datetime(2026, 1, 1, 0, minute, tzinfo=UTC),
    )


def test_sessions_age_by_the_projects_own_order_not_by_days():
    older, newer = fact("s1", "a", 1), fact("s2", "b", 50)

    assert session_ages([newer, older]) == {"s2": 0, "s1": 1}


def test_a_changed_setting_other_sessions_name_outweighs_a_passing_remark_of_the_latest_session():
    said = "Update `DEPLOY_HOST` from `app.example.org` to `10.0.0.7`"
    changed = fact("s1", said, 1, values=["10.0.0.7"], changed=True)
    again = fact("s2", "Deploys go to 10.0.0.7 over SSH", 2, values=["10.0.0.7"])
    remark = fact("s3", "The `parse_rows` helper reads every row", 3, values=["parse_rows"])
    ages = session_ages([changed, again, remark])

    weight = fact_weights([changed, again, remark], ages)

    assert weight[changed.id] > weight[remark.id]
    assert weight[again.id] > weight[remark.id]
    # a name in the code is no setting; a host, a path, a number is
    assert fact_values(remark) == set() and fact_values(changed) == {"10.0.0.7"}


def test_what_the_person_asked_for_and_work_that_was_pushed_weigh_more():
    plain = fact("s1", "Timeout is 30 s", 1, values=["30 s"])
    asked = fact("s1", "Timeout is 60 s", 2, values=["60 s"], asked=2, committed=True)

    weight = fact_weights([plain, asked], session_ages([plain, asked]))

    assert weight[asked.id] - weight[plain.id] == pytest.approx(1.5)


def test_a_name_of_several_words_a_change_set_or_the_person_asked_for_counts_as_a_setting():
    # Claude Code, a Go project: the warning moved to a field of its own
    moved = fact(
        "s1",
        "Moved the warning from `_ai_generated_note` to a new `_ai_hint` field",
        1,
        values=["_ai_generated_note", "_ai_hint"],
        changed=True,
    )
    # Codex, an Elixir project: the person asked for the new job queue
    asked = fact("s1", "Added `oban_jobs` as the queue for mail delivery", 2, values=["oban_jobs"], asked=1)
    passing = fact("s1", "The `parse_rows` helper reads every row", 3, values=["parse_rows"])
    same_moved = fact("s1", "Moved the warning to a new field", 4, changed=True)
    same_asked = fact("s1", "Added a queue for mail delivery", 5, asked=1)
    found = [moved, asked, passing, same_moved, same_asked]

    weight = fact_weights(found, session_ages(found))

    assert weight[moved.id] - weight[same_moved.id] == pytest.approx(1.0, abs=0.05)
    assert weight[asked.id] - weight[same_asked.id] == pytest.approx(1.0, abs=0.05)
    assert fact_names(passing) == {"parse_rows"} and fact_values(passing) == set()


def test_many_sessions_naming_one_function_is_no_support_for_a_statement_about_it():
    said = fact("s1", "Use `sensor_current` for live readings", 1, values=["sensor_current"], changed=True)
    others = [
        fact(f"s{n}", f"Called `sensor_current` again ({n})", n, values=["sensor_current"]) for n in (2, 3)
    ]
    alone = fact("s4", "Use `live_reading` for live readings", 1, values=["live_reading"], changed=True)
    found = [said, *others, alone]
    ages = {"s1": 1, "s2": 2, "s3": 3, "s4": 1}

    weight = fact_weights(found, ages)

    assert weight[said.id] == pytest.approx(weight[alone.id])


def test_one_sessions_memories_are_ordered_by_where_it_said_them_not_by_which_worker_wrote_first():
    def said(session: str, line: int, second: int, micro: int) -> Memory:
        at = datetime(2026, 1, 1, 0, 5, second, micro, tzinfo=UTC)
        return replace(
            memory(session),
            id=f"mem_{session}_{line}",
            created_at=at,
            provenance=Provenance(session, line, line),
        )

    early_but_written_last, late_but_written_first = said("s1", 10, 0, 900), said("s1", 80, 0, 100)
    next_session_early_line = said("s2", 5, 30, 0)  # the next session, learned in the same minute
    order = written_order([early_but_written_last, late_but_written_first, next_session_early_line])
    assert order(early_but_written_last) < order(late_but_written_first) < order(next_session_early_line)
    assert latest_session([early_but_written_last, late_but_written_first, next_session_early_line]) == "s2"
    # what the block keeps of one session's commands does not depend on the order they were written in
    builds = [
        replace(memory("s1", category="build", command=f"make target{n}"), id=f"m{n}", created_at=at)
        for n, at in enumerate([datetime(2026, 1, 1, 0, 5, 0, 100 * n, tzinfo=UTC) for n in range(4)])
    ]
    shuffled = [replace(m, created_at=builds[-1 - k].created_at) for k, m in enumerate(builds)]
    assert [k.command for k in kept_commands(builds)] == [k.command for k in kept_commands(shuffled)]

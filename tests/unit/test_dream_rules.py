"""The dream pass's text rules and the salience the block sorts by: pure functions, no store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.models import Memory, MemoryKind, Provenance
from cairn.domain.salience import FADED_BELOW, faded, salience
from cairn.domain.vocabulary import Tag
from cairn.pipeline.remembering.open_items import (
    after_in_session,
    closer,
    evidence_of,
    failure_of,
    items_of,
    met,
)
from cairn.pipeline.remembering.subjects import changed, core_command, restates, same_command

pytestmark = pytest.mark.unit
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Deploy host: 10.0.0.1", "Deploy host: 192.168.4.20"),
        ("The staging database is Postgres 14", "The staging database is CockroachDB"),
        (
            "The public endpoint is https://old.example.org/rpc for clients",
            "The public endpoint is https://api.example.com/rpc for clients",
        ),
        ("Search radius for a town: 5000 m", "Search radius for a town: 25 km"),
        ("The payments stub listens on port 4010", "The payments stub listens on port 4020"),
    ],
)
def test_the_same_subject_with_another_value_is_a_change(old, new):
    assert changed(old, new)
    assert not restates(old, new)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Deploy host: 10.0.0.1", "Deploy host: 10.0.0.1"),
        ("The map server listens on port 3334", "The chat server listens on port 8765 behind nginx"),
        ("Use `mix format` before every commit", "Run the release with `mix release` on Fridays"),
        ("Deploy host: 10.0.0.1", "Deploy host: 10.0.0.1 (since the move)"),
    ],
)
def test_different_subjects_or_the_same_value_are_no_change(a, b):
    assert not changed(a, b)


def test_a_convention_restated_in_other_words_is_one_statement_and_another_convention_is_not():
    a = "Always run cargo clippy with warnings denied before pushing a branch"
    b = "Before pushing a branch, always run cargo clippy with warnings denied"
    assert restates(a, b)
    assert not restates(a, "Always run the integration tests against a fresh Postgres container")


def test_under_one_lead_in_only_the_same_list_is_a_restatement():
    lead = "Checks run and passing in this project, in the order the session ran them:\n"
    one = lead + "- build: `mvn -pl core package`\n- test: `mvn -pl core test`"
    assert restates(one, lead + "- test: `mvn -pl core test`\n- build:  `mvn -pl core package`")
    assert not restates(one, lead + "- build: `mvn -pl core package`")  # an item less is another list
    assert not restates(one, lead + "- build: `mvn -pl api package`\n- test: `mvn -pl api test`")


def test_a_command_is_compared_without_its_directory_environment_and_trailing_pager():
    assert core_command("cd /src/app && MIX_ENV=test mix test 2>&1 | tail -20") == "mix test"
    assert core_command('ssh host "journalctl -u app | head"') == 'ssh host "journalctl -u app | head"'


def _memory(kind, content, session="s1", **kw) -> Memory:
    return Memory(
        id=kw.pop("id", "mem_1"),
        team_id="t",
        kind=kind,
        content=content,
        provenance=kw.pop("provenance", Provenance(session_id=session)),
        created_at=kw.pop("created_at", NOW),
        **kw,
    )


def test_an_open_todo_is_closed_by_a_later_session_that_marked_it_done():
    todo = _memory(
        MemoryKind.EPISODE,
        "Left unfinished on the session's todo list: Add retries to the webhook consumer",
        tags=(Tag.TODO, Tag.OPEN),
        details={"items": ["Add retries to the webhook consumer"]},
    )
    done = _memory(
        MemoryKind.REFLECTION,
        "Session s2",
        session="s2",
        id="mem_2",
        details={"done": ["Add retries to the webhook consumer"]},
    )
    other = _memory(
        MemoryKind.REFLECTION,
        "Session s3",
        session="s3",
        id="mem_3",
        details={"done": ["Bump the Elixir version"]},
    )
    [item] = items_of(todo)
    evidence = [e for m in (other, done) if (e := evidence_of(m)) is not None]
    found = closer(item, False, evidence)
    assert found is not None and found.session_id == "s2" and found.memory_id == "mem_2"


@pytest.mark.parametrize(
    ("failed", "error", "same_run_later", "another"),
    [
        ("cd api && cargo test", "2 failed", "cargo test 2>&1", "cargo build"),
        # a later session ran the same build its own way: another path to go, no -o, a pager
        (
            "cd /home/dev/app/go && go build -o server ./cmd/web-chat/",
            "go: command not found",
            "/usr/local/go/bin/go build ./cmd/web-chat/ 2>&1",
            "go build ./cmd/api/",
        ),
    ],
    ids=["cargo", "go-its-own-way"],
)
def test_a_command_left_failing_is_closed_only_by_the_same_command_run_well_later(
    failed, error, same_run_later, another
):
    failing = _memory(
        MemoryKind.EPISODE,
        f"`{failed}` still fails with: {error}",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": failed, "outcome": "unresolved"},
    )

    def ran(command: str, session: str, memory_id: str) -> Memory:
        details = {"command": command, "runs": {session: [1, 0]}}
        return _memory(
            MemoryKind.PROCEDURE, f"Run `{command}`", session=session, id=memory_id, details=details
        )

    later, elsewhere = ran(same_run_later, "s2", "mem_2"), ran(another, "s3", "mem_3")
    [item] = items_of(failing)
    assert closer(item, True, [evidence_of(elsewhere)]) is None
    assert closer(item, True, [evidence_of(elsewhere), evidence_of(later)]).session_id == "s2"


def test_salience_rises_with_sessions_and_use_and_fades_with_time_unused():
    once = _memory(MemoryKind.PATTERN, "Use tabs", confidence=0.5)
    kept = _memory(
        MemoryKind.PATTERN,
        "Use tabs",
        confidence=0.5,
        details={"evidence": {"count": 5, "last_seen": NOW.isoformat()}},
    )
    used = _memory(MemoryKind.PATTERN, "Use tabs", confidence=0.5, access_count=20, last_accessed_at=NOW)
    assert salience(kept, NOW) > salience(once, NOW)
    assert salience(used, NOW) > salience(once, NOW)
    assert salience(once, NOW + timedelta(days=90)) < salience(once, NOW)
    assert faded(once, NOW + timedelta(days=120)) and not faded(once, NOW)
    # confirmed by five sessions, it outlasts a one-off by far
    assert not faded(kept, NOW + timedelta(days=120))
    assert salience(once, NOW + timedelta(days=120)) < FADED_BELOW


def test_what_is_closed_superseded_or_demoted_ranks_below_what_is_current():
    base = _memory(MemoryKind.PROCEDURE, "Deploy with `make ship`", confidence=0.7)
    closed = _memory(MemoryKind.EPISODE, "Todo", details={"closed_by": "s2"})
    superseded = _memory(MemoryKind.FACT, "Host: a", superseded_by="mem_9", valid_to=NOW)
    demoted = _memory(
        MemoryKind.PROCEDURE, "Deploy with `make ship`", confidence=0.7, details={"demoted": {"since": "s2"}}
    )
    assert salience(closed, NOW) == 0.0 and salience(superseded, NOW) == 0.0
    assert 0 < salience(demoted, NOW) < salience(base, NOW)
    assert (
        salience(_memory(MemoryKind.FACT, "x", pinned=True, created_at=NOW - timedelta(days=900)), NOW) == 1.0
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cargo build --release", "cargo build --release -p ledger"),
        ("cargo build --release", "cd /home/dev/ledger && ~/.cargo/bin/cargo build --release 2>&1 | tail -5"),
        (
            "go build ./cmd/mcp-server/",
            "cd /home/rob/src/app/go && /usr/local/go/bin/go build ./cmd/mcp-server/ 2>&1",
        ),
        ("go build ./cmd/mcp-server/", 'go build -v ./cmd/mcp-server/ && echo "✓ Build successful"'),
        ("go build ./go/cmd/mcp-server/", "GOOS=linux GOARCH=amd64 go build -o bin/server ./cmd/mcp-server/"),
        ("mix test", "MIX_ENV=test timeout 120 mix test --trace"),
        ("./mvnw -pl core test", "./mvnw -q -pl core test 2>&1 | tail -40"),
        ("cd web && npm run build", "cd /home/dev/shop/web && npm run build --silent"),
    ],
)
def test_one_command_run_another_way_is_the_same_command(a, b):
    assert same_command(a, b) and same_command(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cargo build --release", "cargo test --release"),
        ("go build ./cmd/mcp-server/", "go build ./cmd/web-chat/"),
        ("mvn -pl core test", "mvn -pl core package"),
        ("npm run build", "npm run lint"),
        ("cd web && npm test", "cd api && npm test"),
        ("mix test", "mix test test/ledger/account_test.exs"),  # a narrower run
        ("cd /app && npx tsc --noEmit --skipLibCheck", "cd types && npx tsc --noEmit --skipLibCheck *.ts"),
        ("go build ./cmd/x/", "go build ./cmd/x/ && scp x deploy@10.0.0.5:/srv/"),
        ("curl -s http://localhost:4000/health", "curl -s -v http://localhost:4000/health"),
        ('ssh deploy@10.0.0.5 "systemctl restart app"', 'ssh deploy@10.0.0.6 "systemctl restart app"'),
    ],
)
def test_another_program_target_folder_step_or_remote_request_is_another_command(a, b):
    assert not same_command(a, b)


def test_a_failure_its_own_session_got_past_later_is_closed_but_not_by_a_run_before_it():
    def at(line: int, **kw) -> Memory:
        kind, end = kw.pop("kind"), kw.pop("end", None)
        where = Provenance(session_id="s1", transcript_key="part-0", line_start=line, line_end=end)
        return _memory(kind, kw.pop("content"), provenance=where, **kw)

    failing = at(
        40,
        kind=MemoryKind.EPISODE,
        content="`go build ./go/cmd/x/` still fails with: main module does not contain package",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": "go build ./go/cmd/x/ 2>&1", "outcome": "unresolved"},
    )
    ran = {"command": "cd go && go build ./cmd/x/", "runs": {"s1": [1, 0]}}
    after = evidence_of(
        at(55, kind=MemoryKind.PROCEDURE, content="Build with `go build ./cmd/x/`", details=ran)
    )
    before = evidence_of(
        at(12, kind=MemoryKind.PROCEDURE, content="Build with `go build ./cmd/x/`", details=ran)
    )
    assert after_in_session(failing, after) and not after_in_session(failing, before)
    # a fix whose span holds the failure and ends with the run that passed shows it done at its end
    spanning = at(30, end=52, kind=MemoryKind.PROCEDURE, content="When `go build` fails …", details=ran)
    assert after_in_session(failing, evidence_of(spanning))


def test_a_failure_is_closed_when_a_later_session_fixed_the_same_problem_on_another_command():
    # word for word from a Go project's sessions: the toolchain missing from PATH, fixed two sessions on
    failing = _memory(
        MemoryKind.EPISODE,
        "`cd go && go doc embed` still fails with: /bin/bash: line 1: go: command not found",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": "cd go && go doc embed", "error": "/bin/bash: line 1: go: command not found"},
    )
    fixed = _memory(
        MemoryKind.EPISODE,
        "`go build ./cmd/web-chat/` failed with: /bin/bash: line 1: go: command not found",
        session="s3",
        id="mem_3",
        tags=(Tag.ERROR, "build"),
        details={
            "command": "cd /home/dev/app/go && go build ./cmd/web-chat/ 2>&1",
            "error": "/bin/bash: line 1: go: command not found",
            "outcome": "fixed",
        },
    )
    [item] = items_of(failing)
    assert closer(item, True, [evidence_of(fixed)], failing.details["error"]).session_id == "s3"
    # an exit status names no problem of its own: another command's fix says nothing of this one
    vague = replace(fixed, details={**fixed.details, "error": "Exit code 1"})
    assert closer(item, True, [evidence_of(vague)], "Exit code 1") is None


def test_a_failure_is_met_again_by_any_later_run_of_its_command_or_its_error_and_nothing_else():
    failing = _memory(
        MemoryKind.EPISODE,
        "`mix test --only db` still fails with: ** (DBConnection.ConnectionError) connection refused",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={
            "command": "mix test --only db",
            "error": "** (DBConnection.ConnectionError) connection refused",
        },
    )
    command, trouble = failure_of(failing)
    ran = _memory(
        MemoryKind.PROCEDURE,
        "Test with `mix test --only db`",
        details={"command": "cd app && MIX_ENV=test mix test --only db", "runs": {"s1": [0, 2]}},
    )
    fix = _memory(
        MemoryKind.PROCEDURE,
        "Fix: start Postgres first",
        details={
            "command": "pg_ctl start",
            "fixes_error": "** (DBConnection.ConnectionError) connection refused",
        },
    )
    said = _memory(MemoryKind.FACT, "The test database runs on port 5433", details={"command": "mix test"})
    assert any(same_command(command, c) for c in met(ran)[0])
    assert trouble in met(fix)[1]
    assert met(said) == (set(), set())  # a statement is no run
    assert failure_of(ran) is None and failure_of(said) is None


def test_one_session_running_a_build_several_ways_gives_one_procedure_with_every_run_counted():
    from cairn.pipeline.models import Candidate
    from cairn.pipeline.remembering.consolidation import prepared

    def ran(command: str, ok: int, failed: int, tags=("build", "command")) -> Candidate:
        details = {"command": command, "category": "build", "success_count": ok, "failure_count": failed}
        return Candidate(
            kind=MemoryKind.PROCEDURE, content=f"Build with `{command}`", tags=list(tags), details=details
        )

    batch = [
        ran("cd /home/dev/ledger && cargo build --release 2>&1 | tail -5", 2, 1),
        ran("~/.cargo/bin/cargo build --release -p ledger", 1, 0),
        ran("cargo build --release --jobs 2", 1, 0),  # a switch and its value: the same build
        ran("cargo test --release", 3, 0, tags=("test", "command")),
    ]
    out = prepared(batch)
    [build] = [c for c in out if "build" in c.tags]
    assert build.content == "Build with `cd /home/dev/ledger && cargo build --release 2>&1 | tail -5`"
    assert (build.details["success_count"], build.details["failure_count"]) == (4, 1)
    assert len(out) == 2

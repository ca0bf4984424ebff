"""The dream pass on a real local store: one project's sessions consolidated, idempotent, incremental,
and a kill -9 in the middle of a pass loses nothing (the rerun ends where an uninterrupted pass ends)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cairn.bootstrap import build_container
from cairn.domain.models import KeyScope, MemoryFilter, MemoryKind, Principal, Provenance, Session
from cairn.domain.vocabulary import Tag
from cairn.pipeline.remembering.dream import dream, dream_principal
from cairn.services.memories import NewMemory
from cairn.settings import Settings

from tests.fakes.embedders import HashEmbedder

pytestmark = pytest.mark.integration
PROJECT = "github.com/acme/ledger"
DAY0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]


def open_store(home: Path):
    return build_container(Settings(mode="local", home=home, dream_every_s=0), embedder=HashEmbedder("h"))


def _session(c, team, sid: str, day: int) -> None:
    c.sessions.put(
        Session(id=sid, team_id=team, project=PROJECT, agent="codex", started_at=DAY0 + timedelta(days=day))
    )


def _say(c, team, sid: str, kind: MemoryKind, content: str, **kw):
    new = NewMemory(
        kind=kind,
        content=content,
        project=PROJECT,
        provenance=Provenance(session_id=sid, agent="codex"),
        details={"sessions": [sid], **kw.pop("details", {})},
        **kw,
    )
    return c.memories.remember(dream_principal(team), new)


def seed(c) -> tuple[str, dict[str, str]]:
    """Four sessions of one Rust project: a convention said thrice, a host changed, a todo and a failing
    command finished later, a deploy procedure that stopped working, and unrelated facts."""
    team, _, _ = c.keys.create_team("acme", "dev")
    team_id = team.id
    for i, sid in enumerate(("s1", "s2", "s3", "s4")):
        _session(c, team_id, sid, i)
    ids = {}
    ids["conv1"] = _say(
        c, team_id, "s1", MemoryKind.PATTERN, "Always run cargo clippy with warnings denied before pushing"
    ).id
    ids["conv2"] = _say(
        c, team_id, "s2", MemoryKind.PATTERN, "Before pushing, always run cargo clippy with warnings denied"
    ).id
    ids["conv3"] = _say(
        c, team_id, "s4", MemoryKind.PATTERN, "Always run cargo clippy with warnings denied before pushing!"
    ).id
    ids["host1"] = _say(c, team_id, "s1", MemoryKind.FACT, "Staging deploy host: 10.0.4.12").id
    ids["host2"] = _say(c, team_id, "s3", MemoryKind.FACT, "Staging deploy host: 10.0.9.30").id
    ids["port"] = _say(c, team_id, "s2", MemoryKind.FACT, "The ledger API listens on port 7400").id
    ids["todo"] = _say(
        c,
        team_id,
        "s1",
        MemoryKind.EPISODE,
        "Left unfinished on the session's todo list: Add retries to the settlement webhook consumer",
        tags=(Tag.TODO, Tag.OPEN),
        details={"items": ["Add retries to the settlement webhook consumer"]},
    ).id
    ids["done"] = _say(
        c,
        team_id,
        "s3",
        MemoryKind.REFLECTION,
        "Session s3 (codex).",
        details={"done": ["Add retries to the settlement webhook consumer"]},
    ).id
    ids["failing"] = _say(
        c,
        team_id,
        "s2",
        MemoryKind.EPISODE,
        "`cargo test -p ledger` still fails with: 2 tests failed",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": "cargo test -p ledger", "outcome": "unresolved"},
    ).id
    # a failure no later session met again (left behind once two sessions came after it), and one only
    # the last session came after
    ids["probe_failed"] = _left_failing(
        c, team_id, "s1", "psql -h db.internal -c 'select 1'", "could not translate host name db.internal"
    )
    ids["lint_failing"] = _left_failing(c, team_id, "s3", "cargo clippy -- -D warnings", "3 warnings emitted")
    ids["lint_failing_again"] = _left_failing(
        c, team_id, "s4", "cd crates && cargo clippy -- -D warnings", "1 warning emitted"
    )
    ids["tests"] = _say(
        c,
        team_id,
        "s4",
        MemoryKind.PROCEDURE,
        "Test with `cargo test -p ledger`",
        tags=("test", "command"),
        details={"command": "cd crates && cargo test -p ledger 2>&1", "runs": {"s4": [1, 0]}},
    ).id
    ids["deploy"] = _say(
        c,
        team_id,
        "s1",
        MemoryKind.PROCEDURE,
        "Deploy with `make ship`",
        confidence=0.8,
        tags=("deploy", "command"),
        details={"command": "make ship", "runs": {"s1": [2, 0], "s2": [1, 0], "s4": [0, 3]}},
    ).id
    # one release build, run three ways in three sessions: plainly, from the project's folder with a
    # package switch and a pager, and through the toolchain's full path; a request to the running
    # server is what its words make it, never folded with another
    ids["build1"] = _say(
        c,
        team_id,
        "s1",
        MemoryKind.PROCEDURE,
        "Build with `cargo build --release`",
        **_ran("cargo build --release", "s1", 1, 0),
    ).id
    ids["build2"] = _say(
        c,
        team_id,
        "s2",
        MemoryKind.PROCEDURE,
        "Build with `cd /home/dev/ledger && cargo build --release -p ledger 2>&1 | tail -5`",
        **_ran("cd /home/dev/ledger && cargo build --release -p ledger 2>&1 | tail -5", "s2", 2, 1),
    ).id
    ids["build3"] = _say(
        c,
        team_id,
        "s3",
        MemoryKind.PROCEDURE,
        "Build with `/home/dev/.cargo/bin/cargo build --release`",
        **_ran("/home/dev/.cargo/bin/cargo build --release", "s3", 1, 0),
    ).id
    ids["probe1"] = _say(
        c,
        team_id,
        "s1",
        MemoryKind.PROCEDURE,
        "Run with `curl -s http://localhost:7400/health`",
        **_ran("curl -s http://localhost:7400/health", "s1", 1, 0),
    ).id
    ids["probe2"] = _say(
        c,
        team_id,
        "s3",
        MemoryKind.PROCEDURE,
        "Run with `curl -s http://localhost:7400/ready`",
        **_ran("curl -s http://localhost:7400/ready", "s3", 1, 0),
    ).id
    return team_id, ids


def _left_failing(c, team, sid: str, command: str, error: str) -> str:
    """An error that never stopped failing in its session, as the pipeline learns one."""
    return _say(
        c,
        team,
        sid,
        MemoryKind.EPISODE,
        f"`{command}` still fails with: {error}",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": command, "error": error, "outcome": "unresolved"},
    ).id


def _ran(command: str, session: str, ok: int, failed: int) -> dict:
    kind = "build" if "build" in command else "run"
    return {
        "tags": (kind, "command"),
        "details": {
            "command": command,
            "category": kind,
            "runs": {session: [ok, failed]},
            "success_count": ok,
            "failure_count": failed,
        },
    }


def snapshot(c, team_id: str) -> dict:
    """What a pass decides, without its clock: each memory's validity, links, details and confidence."""
    out = {}
    for m in c.pipeline.memory_repo.iter_team(team_id):
        details = json.dumps(dict(m.details), sort_keys=True)
        out[m.id] = (m.is_current, m.superseded_by, details, m.confidence)
    relations = sorted(
        (r.source_id, r.predicate, r.target_id) for r in c.pipeline.relations.iter_team(team_id)
    )
    return {"memories": out, "relations": relations}


def current(c, team_id: str, kind: MemoryKind) -> list:
    flt = MemoryFilter(project=PROJECT, kinds=frozenset({kind}))
    return list(c.memories.list(dream_principal(team_id), flt, limit=100).items)


@pytest.fixture
def store(tmp_path):
    c = open_store(tmp_path / "home")
    team_id, ids = seed(c)
    yield c, team_id, ids
    c.close()


def test_one_pass_folds_restatements_supersedes_changes_closes_finished_items_and_demotes(store):
    c, team, ids = store
    out = dream(c.pipeline, team, PROJECT)
    get = lambda i: c.pipeline.memory_repo.get(team, ids[i])  # noqa: E731

    # a convention said in three sessions is one memory, the newest wording, with its evidence
    [convention] = current(c, team, MemoryKind.PATTERN)
    assert convention.id == ids["conv3"]
    evidence = convention.details["evidence"]
    assert evidence["sessions"] == ["s1", "s2", "s4"] and evidence["count"] == 3
    assert evidence["first_seen"].startswith("2026-03-01") and evidence["last_seen"].startswith("2026-03-04")
    for old in ("conv1", "conv2"):  # history is kept, linked to the one that stays
        assert get(old).superseded_by == ids["conv3"] and get(old).valid_to is not None

    # the host a later session changed: only the new one is current
    facts = {m.id for m in current(c, team, MemoryKind.FACT)}
    assert facts == {ids["host2"], ids["port"]}
    assert get("host1").superseded_by == ids["host2"] and get("host1").details["changed_in"] == "s3"
    rels = c.pipeline.relations.for_memory(team, ids["host2"], "out")
    assert [(r.predicate, r.target_id) for r in rels] == [("supersedes", ids["host1"])]

    # the todo s3 finished and the command s4 ran well are closed, citing the session
    todo, failing = get("todo"), get("failing")
    assert todo.valid_to is not None and todo.details["closed_by"] == "s3"
    assert todo.details["closed_items"] == [
        {"item": "Add retries to the settlement webhook consumer", "closed_by": "s3", "evidence": ids["done"]}
    ]
    assert failing.valid_to is not None and failing.details["closed_by"] == "s4"
    # a failure s2 and s3 never met again was left behind by them; the lint s3 and s4 both left failing
    # is one failure, the newest, failing in both
    left = get("probe_failed")
    assert left.valid_to is not None and left.superseded_by is None
    assert left.details["left_behind"] == {"sessions": ["s2", "s3"]} and "closed_by" not in left.details
    lint = get("lint_failing_again")
    assert lint.is_current and lint.details["evidence"]["sessions"] == ["s3", "s4"]
    assert get("lint_failing").superseded_by == lint.id

    # a deploy that worked in s1 and s2 and only failed in s4 is demoted, not forgotten
    deploy = get("deploy")
    assert deploy.is_current and deploy.details["demoted"]["since"] == "s4" and deploy.confidence <= 0.3
    # the release build run three ways in three sessions is one procedure; every run of it adds up
    builds = [m for m in current(c, team, MemoryKind.PROCEDURE) if "build" in m.tags]
    assert [b.id for b in builds] == [ids["build3"]]  # the newest way of running it
    [build] = builds
    assert build.details["evidence"]["sessions"] == ["s1", "s2", "s3"]
    assert build.details["runs"] == {"s1": [1, 0], "s2": [2, 1], "s3": [1, 0]}
    assert (build.details["success_count"], build.details["failure_count"]) == (4, 1)
    assert get("build1").superseded_by == get("build2").superseded_by == build.id
    assert get("probe1").is_current and get("probe2").is_current
    assert out.counts() == {
        "superseded": 1,
        "folded": 5,
        "closed": 2,
        "left_behind": 1,
        "demoted": 1,
        "restored": 0,
        "evidenced": 3,
        "side_branch": 0,
        "edited_out": 0,
    }


def test_recall_shows_the_current_value_and_history_stays_searchable(store):
    c, team, ids = store
    dream(c.pipeline, team, PROJECT)
    caller = dream_principal(team)
    hits = c.recall.recall(caller, "staging deploy host", MemoryFilter(project=PROJECT), limit=5).hits
    shown = [h.memory.id for h in hits]
    assert ids["host2"] in shown and ids["host1"] not in shown
    flt = MemoryFilter(project=PROJECT, kinds=frozenset({MemoryKind.FACT}), include_superseded=True)
    assert ids["host1"] in {m.id for m in c.memories.list(caller, flt, limit=50).items}


def test_a_second_pass_changes_nothing_and_a_pass_with_nothing_new_is_skipped(store):
    c, team, _ = store
    dream(c.pipeline, team, PROJECT)
    before = snapshot(c, team)
    again = dream(c.pipeline, team, PROJECT, full=True)
    assert again.writes == 0 and snapshot(c, team) == before
    assert dream(c.pipeline, team, PROJECT).writes == 0


def test_a_later_pass_touches_only_what_a_new_session_changed(store):
    c, team, ids = store
    dream(c.pipeline, team, PROJECT)
    state_key = f"teams/{team}/projects/"
    assert any(k.endswith("/dream.json") for k in c.blobs.list(state_key))
    untouched = c.pipeline.memory_repo.get(team, ids["port"]).updated_at
    # a fifth session works the deploy again, well: the procedure is restored, nothing else moves
    _session(c, team, "s5", 4)
    deploy = c.pipeline.memory_repo.get(team, ids["deploy"])
    runs = {**deploy.details["runs"], "s5": [1, 0]}
    from cairn.services.memories import MemoryPatch

    c.memories.update(dream_principal(team), deploy.id, MemoryPatch(details={**deploy.details, "runs": runs}))
    out = dream(c.pipeline, team, PROJECT)
    assert out.restored == [ids["deploy"]] and out.writes == 1
    restored = c.pipeline.memory_repo.get(team, ids["deploy"])
    assert "demoted" not in restored.details and restored.confidence == 0.8
    assert c.pipeline.memory_repo.get(team, ids["port"]).updated_at == untouched


KILLER = """
import os, signal, sys
from pathlib import Path
sys.path[:0] = [{repo!r}, {layers!r}]
from tests.integration.test_dream_pass import open_store, PROJECT
from cairn.pipeline.remembering.dream import dream
c = open_store(Path({home!r}))
writes = 0
def after_write():
    global writes
    writes += 1
    if writes == {kill_after}:
        os.kill(os.getpid(), signal.SIGKILL)
dream(c.pipeline, {team!r}, PROJECT, after_write=after_write)
"""


@pytest.mark.parametrize("kill_after", [1, 2, 4, 7, 9])
def test_a_pass_killed_with_sigkill_reruns_to_the_end_an_uninterrupted_pass_reaches(tmp_path, kill_after):
    seeded = tmp_path / "seeded"
    c = open_store(seeded)
    team, _ = seed(c)
    c.close()
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    shutil.copytree(seeded, whole)
    shutil.copytree(seeded, killed)

    c = open_store(whole)
    dream(c.pipeline, team, PROJECT)
    expected = snapshot(c, team)
    c.close()

    script = KILLER.format(
        repo=str(REPO),
        layers=str(REPO / "layers" / "core"),
        home=str(killed),
        team=team,
        kill_after=kill_after,
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert run.returncode == -9, run.stderr  # killed in the middle of the pass, as kill -9 does

    c = open_store(killed)
    try:
        dream(c.pipeline, team, PROJECT)
        assert snapshot(c, team) == expected
    finally:
        c.close()


def test_a_learned_session_ends_with_its_projects_dream_pass(container, api, team_a):
    from tests.integration.pipeline_helpers import claude_transcript, learn

    raw = claude_transcript(
        "dreamt", [("user", "We always squash-merge pull requests."), ("assistant", "Noted.")]
    )
    session = learn(container, api, team_a.headers, raw=raw, session_id="dreamt", project=PROJECT)
    assert session["status"] == "learned"
    assert set(session["stats"]["dream"]) >= {"superseded", "folded", "closed", "demoted", "evidenced"}
    states = [k for k in container.blobs.list(f"teams/{team_a.team_id}/") if k.endswith("/dream.json")]
    assert len(states) == 1


def test_a_sessions_own_story_is_never_superseded_by_another_sessions(store):
    c, team, _ = store
    first = _say(
        c, team, "s1", MemoryKind.FACT, "Primary request: harden the Redis config", tags=(Tag.SUMMARY,)
    )
    later = _say(c, team, "s2", MemoryKind.FACT, "Primary request: add tool logging", tags=(Tag.SUMMARY,))
    dream(c.pipeline, team, PROJECT)
    assert {first.id, later.id} <= {m.id for m in current(c, team, MemoryKind.FACT)}


def test_the_local_server_gets_a_dream_timer_unless_it_is_turned_off(tmp_path):
    on = build_container(Settings(mode="local", home=tmp_path / "on"), embedder=HashEmbedder("h"))
    off = open_store(tmp_path / "off")  # CAIRN_DREAM_EVERY_S=0
    try:
        assert on.dream is not None and on.dream() == {"projects": 0, "failed": 0}
        assert off.dream is None
    finally:
        on.close()
        off.close()


def test_a_failure_is_left_behind_only_by_its_own_members_later_sessions(tmp_path):
    c = open_store(tmp_path / "home")
    team_id = c.keys.create_team("acme", "dev")[0].id
    for i, sid in enumerate(("s1", "s2", "s3", "s4", "s5")):
        _session(c, team_id, sid, i)

    def say(member: str, sid: str, kind: MemoryKind, content: str, **kw):
        caller = Principal(team_id, member, "k", frozenset({KeyScope.WRITE}))
        new = NewMemory(
            kind=kind, content=content, project=PROJECT, provenance=Provenance(session_id=sid), **kw
        )
        return c.memories.remember(caller, new)

    failing = say(
        "ana",
        "s1",
        MemoryKind.EPISODE,
        "`mvn -pl billing verify` still fails with: Tests run: 12, Failures: 2",
        tags=(Tag.ERROR, Tag.UNRESOLVED),
        details={"command": "mvn -pl billing verify", "error": "Tests run: 12, Failures: 2"},
    )
    for sid in ("s2", "s3"):  # a teammate works elsewhere in the project twice
        say("ben", sid, MemoryKind.FACT, f"The reports module exports CSV ({sid})")
    try:
        dream(c.pipeline, team_id, PROJECT)
        assert c.pipeline.memory_repo.get(team_id, failing.id).is_current
        say("ana", "s4", MemoryKind.FACT, "The billing module targets Java 21")  # her next session
        dream(c.pipeline, team_id, PROJECT)
        assert c.pipeline.memory_repo.get(team_id, failing.id).is_current  # one of hers is not two
        say("ana", "s5", MemoryKind.FACT, "The billing module builds with Maven 3.9")
        dream(c.pipeline, team_id, PROJECT)
        left = c.pipeline.memory_repo.get(team_id, failing.id)
        assert not left.is_current and left.details["left_behind"] == {"sessions": ["s4", "s5"]}
    finally:
        c.close()


def test_a_persons_rule_the_agent_stated_in_full_as_it_put_it_in_place_is_one_memory(store):
    c, team, _ = store
    asked = _say(
        c,
        team,
        "s2",
        MemoryKind.PREFERENCE,
        "the links for the ledgers should always go to books.acme.dev not api.acme.dev.",
    )
    stated = _say(
        c,
        team,
        "s2",
        MemoryKind.FACT,
        "When linking to a ledger, ALWAYS use `https://books.acme.dev` as the base URL — NEVER use "
        "`api.acme.dev`, which does not host ledgers.",
    )
    earlier = _say(c, team, "s1", MemoryKind.FACT, "Never link to `api.acme.dev` or `books.acme.dev` yet")
    dream(c.pipeline, team, PROJECT)
    get = lambda i: c.pipeline.memory_repo.get(team, i)  # noqa: E731
    assert get(asked.id).superseded_by == stated.id and get(asked.id).details["folded_into"] == stated.id
    assert get(stated.id).is_current and get(earlier.id).is_current  # a rule said before it asks nothing
    assert dream(c.pipeline, team, PROJECT, full=True).writes == 0


def test_work_a_session_committed_only_to_a_branch_never_merged_names_that_branch_until_it_is(store):
    c, team, _ = store

    def git(sid: str, branch: str):
        content = f"Git activity of this session: commits on `{branch}`: `{sid}0a1b2c` work of {sid}"
        return _say(
            c, team, sid, MemoryKind.EPISODE, content, tags=(Tag.GIT,), details={"branches": [branch]}
        )

    for sid in ("s1", "s2", "s4"):
        git(sid, "main")
    git("s3", "grpc-spike")
    spike = _say(
        c, team, "s3", MemoryKind.FACT, "Env vars changed: `LEDGER_URL` → `GRPC_ADDR`", tags=("reported",)
    )
    kept = _say(c, team, "s3", MemoryKind.FACT, "The ledger API listens on port 7400 in staging")
    dream(c.pipeline, team, PROJECT)
    get = lambda m: c.pipeline.memory_repo.get(team, m.id)  # noqa: E731
    assert get(spike).details["side_branch"] == "grpc-spike"
    assert "side_branch" not in get(kept).details  # what the session found, not work it did
    assert dream(c.pipeline, team, PROJECT, full=True).writes == 0

    _session(c, team, "s5", 5)
    _say(
        c,
        team,
        "s5",
        MemoryKind.EPISODE,
        "Git activity of this session: merged `grpc-spike` into `main`",
        tags=(Tag.GIT,),
        details={"branches": ["main"]},
    )
    dream(c.pipeline, team, PROJECT)
    assert "side_branch" not in get(spike).details


def test_two_preferences_one_rule_states_both_fold_into_it_with_the_sessions_of_both(store):
    c, team, _ = store
    first = _say(c, team, "s1", MemoryKind.PREFERENCE, "links should go to books.acme.dev, not api.acme.dev")
    second = _say(
        c, team, "s2", MemoryKind.PREFERENCE, "use books.acme.dev for ledger links and never api.acme.dev"
    )
    rule = _say(
        c,
        team,
        "s3",
        MemoryKind.FACT,
        "ALWAYS link ledgers to `https://books.acme.dev` — NEVER to `api.acme.dev`",
    )
    dream(c.pipeline, team, PROJECT)
    get = lambda m: c.pipeline.memory_repo.get(team, m.id)  # noqa: E731
    assert get(first).superseded_by == get(second).superseded_by == rule.id
    assert get(rule).details["evidence"]["sessions"] == ["s1", "s2", "s3"]


def test_a_commit_left_to_the_person_ends_once_a_later_git_status_lists_none_of_its_files(store):
    c, team, _ = store
    files = ["src/ledger.rs", "src/report.rs"]
    handed = _say(
        c,
        team,
        "s1",
        MemoryKind.EPISODE,
        "I've added the rounding fix to `src/ledger.rs` and `src/report.rs`. The changes are ready for you "
        "to commit and deploy when you're ready!",
        tags=("outcome",),
        details={"handover": {"asks": ["commit", "deploy"], "paths": files}},
    )

    def status(sid: str, dirty: list[str], ahead: bool = False, member: str | None = None):
        content = f"Git activity of this session: commits on `main`: `{sid}0a1b2c` work of {sid}"
        caller = (
            Principal(team, member, "k", frozenset({KeyScope.WRITE})) if member else dream_principal(team)
        )
        new = NewMemory(
            kind=MemoryKind.EPISODE,
            content=content,
            project=PROJECT,
            provenance=Provenance(session_id=sid, agent="codex"),
            tags=(Tag.GIT,),
            details={"sessions": [sid], "tree": {"dirty": dirty, "ahead": ahead, "complete": True}},
        )
        return c.memories.remember(caller, new)

    get = lambda m: c.pipeline.memory_repo.get(team, m.id)  # noqa: E731
    status("s2", ["../src/report.rs", "README.md"])  # one of its files is still not committed
    dream(c.pipeline, team, PROJECT)
    assert get(handed).is_current
    status("s3", ["README.md"], ahead=True)  # committed, not yet pushed: no deploy yet
    dream(c.pipeline, team, PROJECT)
    assert get(handed).is_current
    status("s4", ["notes/todo.md"])
    dream(c.pipeline, team, PROJECT)
    ended = get(handed)
    assert not ended.is_current and ended.details["closed_by"] == "s4"
    assert (
        ended.details["closed_items"][0]["item"]
        == "commit and deploy the changes to src/ledger.rs, src/report.rs"
    )
    assert dream(c.pipeline, team, PROJECT, full=True).writes == 0


def test_a_handover_is_not_taken_up_by_a_teammates_checkout(tmp_path):
    c = open_store(tmp_path / "home")
    team_id = c.keys.create_team("acme", "dev")[0].id
    for i, sid in enumerate(("s1", "s2")):
        _session(c, team_id, sid, i)

    def say(member: str, sid: str, content: str, tags: tuple[str, ...], details: dict):
        caller = Principal(team_id, member, "k", frozenset({KeyScope.WRITE}))
        new = NewMemory(
            kind=MemoryKind.EPISODE,
            content=content,
            project=PROJECT,
            provenance=Provenance(session_id=sid),
            tags=tags,
            details=details,
        )
        return c.memories.remember(caller, new)

    try:
        handed = say(
            "ana",
            "s1",
            "Added the export endpoint in `lib/export.ex`; it is not committed yet, commit when ready.",
            ("outcome",),
            {"handover": {"asks": ["commit"], "paths": ["lib/export.ex"]}},
        )
        say(
            "ben",
            "s2",
            "Git activity of this session: nothing to commit",
            (Tag.GIT,),
            {"tree": {"dirty": []}},
        )
        dream(c.pipeline, team_id, PROJECT)
        assert c.pipeline.memory_repo.get(team_id, handed.id).is_current  # his clean tree is not hers
    finally:
        c.close()


def test_a_value_a_later_sessions_edits_took_out_of_the_files_is_no_longer_current(store):
    c, team, _ = store
    radius = _say(c, team, "s1", MemoryKind.FACT, "A city search now uses a 15–25 km radius (was 1.5km)")
    former = _say(c, team, "s1", MemoryKind.FACT, "Village search radius: 25-50km (was 5-10km)")
    _say(
        c,
        team,
        "s2",
        MemoryKind.REFLECTION,
        "Session s2 (codex).",
        details={"edited_out": ["15-25km", "5-10km"]},
    )
    dream(c.pipeline, team, PROJECT)
    get = lambda m: c.pipeline.memory_repo.get(team, m.id)  # noqa: E731
    ended = get(radius)
    assert not ended.is_current and ended.details["edited_out"] == {"value": "15-25km", "session": "s2"}
    assert get(former).is_current  # it gives 5-10km as what the radius was
    assert dream(c.pipeline, team, PROJECT, full=True).writes == 0


def test_values_edited_out_on_a_branch_never_merged_leave_the_fact_current(store):
    c, team, _ = store

    def git(sid: str, branch: str):
        content = f"Git activity of this session: commits on `{branch}`: `{sid}0a1b2c` work of {sid}"
        _say(c, team, sid, MemoryKind.EPISODE, content, tags=(Tag.GIT,), details={"branches": [branch]})

    for day, sid in enumerate(("s5", "s6", "s7"), start=5):  # sessions the seed wrote no reflection for
        _session(c, team, sid, day)
    for sid in ("s1", "s5", "s7"):
        git(sid, "main")
    git("s6", "pool-spike")
    pool = _say(c, team, "s5", MemoryKind.FACT, "The pool timeout is 500ms in production")
    spike = _say(
        c, team, "s6", MemoryKind.REFLECTION, "Session s6 (codex).", details={"edited_out": ["500ms"]}
    )
    assert spike.details["edited_out"] == ["500ms"]
    dream(c.pipeline, team, PROJECT)
    assert c.pipeline.memory_repo.get(team, pool.id).is_current


def test_a_route_a_later_session_sent_all_of_its_path_elsewhere_is_superseded_by_that_statement(store):
    c, team, _ = store
    split = _say(
        c,
        team,
        "s1",
        MemoryKind.FACT,
        "Route order calls to `/api/orders/*` → port 4000 (orders service); everything else to `/` → "
        "port 8080",
    )
    static = _say(c, team, "s1", MemoryKind.FACT, "`/assets/` is served by the CDN bucket")
    whole = _say(c, team, "s3", MemoryKind.FACT, "All `/api/` requests go to the Phoenix endpoint")
    dream(c.pipeline, team, PROJECT)
    get = lambda m: c.pipeline.memory_repo.get(team, m.id)  # noqa: E731
    closed = get(split)
    assert not closed.is_current and closed.superseded_by == whole.id
    assert closed.details["changed_in"] == "s3"
    assert get(static).is_current and get(whole).is_current
    assert dream(c.pipeline, team, PROJECT, full=True).writes == 0

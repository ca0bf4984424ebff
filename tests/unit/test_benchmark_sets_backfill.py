"""The multi-session benchmark learns its sets through `cairn backfill`'s path: laid out as each agent stores
its sessions (`benchmarks/backfill_sets.py`), `backfill.scan` finds every session of every set, in the set's
order, and each reads back as the transcript the set recorded. No pipeline runs: this keeps the layout from
rotting as the stores' readers change."""

from __future__ import annotations

import dataclasses
import json

import pytest
from cairn.capture.backfill import read_session
from cairn.transcripts import parse_transcript

from benchmarks.backfill_sets import expected_keys, find, transcript
from tests.paths import FIXTURES, REPO

pytestmark = pytest.mark.unit

DATA = REPO / "benchmarks" / "data"
SETS = {
    "safecast": DATA / "multi-session-dev",
    "cc-backend": DATA / "projects" / "cc-backend",
    "fittoday": DATA / "projects" / "fittoday",
    "session-bridge": DATA / "projects" / "session-bridge",
}
# a session that started in another repository: a backfill in the project's root rightly leaves it out, and
# the benchmark adds it from the folder it started in
ELSEWHERE = {
    "safecast": {
        "claude-code:8f04c9d2-6bf8-4ca1-8729-af6ffb5b771d": "/home/rob/Documents/Safecast/safecast-new-map"
    }
}
AGENTS = {
    "safecast": {"claude-code"},
    "cc-backend": {"claude-code"},
    "fittoday": {"claude-code"},
    "session-bridge": {"codex", "gemini-cli", "opencode"},
}


def test_the_sets_are_the_ones_the_benchmark_runs():
    sets = {d.name for d in (DATA / "projects").iterdir() if (d / "set.json").is_file()}
    assert sets | {"safecast"} == set(SETS)


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_scan_finds_every_session_of_the_set_in_its_order(name, tmp_path):
    spec = json.loads((SETS[name] / "set.json").read_text())
    found = find(SETS[name], spec, tmp_path / "home")
    assert [s.key for s in found.plan] == expected_keys(spec)
    assert found.missing == [] and found.strangers == []
    assert found.elsewhere == ELSEWHERE.get(name, {})
    assert found.scanned == len(spec["sessions"]) - len(found.elsewhere)
    assert {s.agent for s in found.plan} == AGENTS[name]
    assert all(s.parts == 1 for s in found.plan)  # no set keeps a sub-agent's transcript of its own


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_found_session_reads_back_as_the_set_recorded_it(name, tmp_path):
    spec = json.loads((SETS[name] / "set.json").read_text())
    found = find(SETS[name], spec, tmp_path / "home")
    for s, recorded in zip(found.plan, spec["sessions"], strict=True):
        main, others = read_session(s)
        assert others == []
        raw = transcript(SETS[name], recorded)
        if s.agent != "opencode":
            assert main == raw, s.key
            continue
        # OpenCode's database gives the plugin's lines: the same messages as the export, one per line
        ours = parse_transcript(main, s.agent, "session.jsonl")
        theirs = parse_transcript(raw, s.agent, recorded["file"])
        assert [dataclasses.replace(e, line_no=0) for e in ours.events] == [
            dataclasses.replace(e, line_no=0) for e in theirs.events
        ], s.key
        assert ours.session_id == theirs.session_id == s.session_id


def test_a_sets_sub_agent_files_are_laid_out_where_their_agent_keeps_them_and_found_with_the_session(
    tmp_path,
):
    """PROTOCOL.md's `extra`: a Claude Code sub-agent and a Codex worker thread come with their session."""
    home = FIXTURES / "agent_stores" / "home"
    claude = home / ".claude" / "projects" / "-home-dev-shop" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    subagent = claude.with_suffix("") / "subagents" / "agent-a15e2b1.jsonl"
    rollouts = home / ".codex" / "sessions" / "2026" / "06" / "25"
    parent = rollouts / "rollout-2026-06-25T02-07-10-019efc87-fa98-7971-91df-0c9512a065da.jsonl"
    worker = rollouts / "rollout-2026-06-25T02-09-41-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
    sessions = tmp_path / "set" / "sessions"
    sessions.mkdir(parents=True)
    for f in (claude, subagent, parent, worker):
        (sessions / f.name).write_bytes(f.read_bytes())
    (sessions / "fe5e1c67.metadata.json").write_text('{"agent": "Claude Code"}')
    spec = {
        "project": "shop",
        "sessions": [
            {
                "id": claude.stem,
                "agent": "claude-code",
                "file": f"sessions/{claude.name}",
                "extra": [f"sessions/{subagent.name}", "sessions/fe5e1c67.metadata.json"],
            },
            {
                "id": "019efc87-fa98-7971-91df-0c9512a065da",
                "agent": "codex",
                "file": f"sessions/{parent.name}",
                "extra": [f"sessions/{worker.name}"],
            },
        ],
    }
    found = find(tmp_path / "set", spec, tmp_path / "home")
    assert [s.key for s in found.plan] == expected_keys(spec) and found.scanned == 2
    (c, x) = found.plan
    assert [p.name for p in c.others] == [subagent.name] and [p.name for p in x.others] == [worker.name]
    assert [read_session(s)[1] for s in found.plan] == [[subagent.read_bytes()], [worker.read_bytes()]]

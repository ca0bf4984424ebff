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
from tests.paths import REPO

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

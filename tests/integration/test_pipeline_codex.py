"""The pipeline on real Codex rollouts (madshn/localpush fixtures, whose free text is sanitised upstream).

The rollouts keep structure, tool names and outcomes but replace every text with `[REDACTED_TEXT ...]`
placeholders, so the right result is: the session is learned, a reflection counts the tools actually
used, and nothing is "learned" from placeholders, developer instructions or the system prompt.
"""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import CODEX_DIR, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
LARGEST = "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
SID = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
PROJECT = "github.com/madshn/localpush"


@pytest.fixture
def learned(container, api, team_a):
    raw = (CODEX_DIR / LARGEST).read_bytes()
    session = learn(container, api, team_a.headers, raw=raw, session_id=SID, project=PROJECT, agent="codex")
    return session, memories_of(api, team_a.headers, PROJECT)


def test_a_real_codex_rollout_is_learned(learned):
    session, memories = learned
    assert session["status"] == "learned", session["stats"]
    assert session["stats"]["parse"]["events"] > 1000
    [reflection] = [m for m in memories if m["kind"] == "reflection"]
    assert "exec_command×212" in reflection["content"]
    assert "apply_patch×49" in reflection["content"]


def test_nothing_is_learned_from_placeholders_or_instructions(learned):
    _, memories = learned
    # excerpts quote the (redacted) session as it was; nothing extracted or written by Cairn may
    for m in memories:
        if m["kind"] != "excerpt":
            assert "[REDACTED_" not in m["content"], m
    assert {m["kind"] for m in memories} <= {"reflection", "handoff", "excerpt"}


def test_learning_the_rollout_again_creates_nothing_new(learned, container, api, team_a):
    _, before = learned
    container.runner.run(team_a.team_id, SID, force=True)
    assert sorted(m["id"] for m in memories_of(api, team_a.headers, PROJECT)) == sorted(
        m["id"] for m in before
    )


def test_every_codex_fixture_is_learned_or_fails_clearly(container, api, team_a):
    for path in sorted(CODEX_DIR.glob("rollout-*.jsonl")):
        sid = path.stem.split("-", 6)[-1]
        session = learn(
            container,
            api,
            team_a.headers,
            raw=path.read_bytes(),
            session_id=sid,
            project="github.com/madshn/localpush-all",
            agent="codex",
        )
        assert session["status"] == "learned", (path.name, session["stats"])

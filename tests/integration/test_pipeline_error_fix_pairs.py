"""An error and its fix that land in different chunks of a session are still paired (by the reflect stage)."""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import bash_turns, claude_transcript, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/api"
ERROR = "E   ModuleNotFoundError: No module named 'httpx'"


def _filler(n: int) -> list:
    prose = "Reading the request handlers and the settings module to see how the client is built. " * 10
    return [("assistant", [{"type": "text", "text": f"{i}: {prose}"}]) for i in range(n)]


def test_an_error_fixed_several_chunks_later_becomes_a_fixed_episode_and_a_fix_procedure(
    container, api, team_a
):
    turns = [
        ("user", "Run the unit tests please."),
        *bash_turns("pytest -q tests/unit", f"{ERROR}\n1 error in 0.31s", error=True, call_id="t1"),
        *_filler(60),  # ~50 KB of reading: the fix lands two chunks later
        *bash_turns("pip install httpx", "Successfully installed httpx-0.28.1", call_id="t2"),
        *bash_turns("pytest -q tests/unit", "12 passed in 0.52s", call_id="t3"),
    ]
    raw = claude_transcript("split-fix", turns)
    session = learn(container, api, team_a.headers, raw=raw, session_id="split-fix", project=PROJECT)
    assert session["status"] == "learned", session["stats"]
    assert session["stats"]["chunk"]["chunks"] >= 3

    memories = memories_of(api, team_a.headers, PROJECT)
    episodes = [m for m in memories if m["kind"] == "episode" and "pytest -q tests/unit" in m["content"]]
    assert [e["details"]["outcome"] for e in episodes] == ["fixed"]
    assert "No module named 'httpx'" in episodes[0]["content"]
    [fix] = [m for m in memories if m["kind"] == "procedure" and "fixes_error" in m["details"]]
    assert fix["details"]["steps"] == ["run `pip install httpx`", "pytest -q tests/unit"]
    rels = api.get(f"/v1/memories/{fix['id']}/relations", headers=team_a.headers, params={"direction": "out"})
    assert any(
        r["predicate"] == "fixes" and r["target_id"] == episodes[0]["id"] for r in rels.json()["items"]
    )

"""What a session learned after it moved to another branch names that branch, in the memory and in what
an agent is shown (`tests/unit/test_recall_view.py`): it is that branch's work, which the project may
never merge."""

from __future__ import annotations

import json

import pytest

from tests.integration.pipeline_helpers import bash_turns, claude_transcript, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/chat"


def _on_branches(raw: bytes, switch_at: int, branch: str) -> bytes:
    """Claude Code's `gitBranch` on every line: `main` before line `switch_at`, `branch` from it on."""
    lines = raw.decode().splitlines()
    out = [
        json.dumps({**json.loads(ln), "gitBranch": "main" if i < switch_at else branch})
        for i, ln in enumerate(lines, 1)
    ]
    return ("\n".join(out) + "\n").encode()


def test_memories_learned_after_the_switch_carry_the_branch_and_earlier_ones_do_not(container, api, team_a):
    turns = [
        ("user", "Run the unit tests please."),
        *bash_turns(
            "pytest -q tests/unit",
            "E   ModuleNotFoundError: No module named 'httpx'",
            error=True,
            call_id="t1",
        ),
        *bash_turns("pip install httpx", "Successfully installed httpx-0.28.1", call_id="t2"),
        *bash_turns("pytest -q tests/unit", "12 passed in 0.52s", call_id="t3"),
        ("user", "Now try the chat against Ollama on a branch."),  # line 8: the checkout moved
        *bash_turns("git checkout -b ollama-chat", "Switched to a new branch 'ollama-chat'", call_id="t4"),
        *bash_turns(
            "go build ./cmd/chat", "go: cannot find module providing package ollama", error=True, call_id="t5"
        ),
        *bash_turns(
            "go get github.com/ollama/ollama/api", "go: added github.com/ollama/ollama v0.5.0", call_id="t6"
        ),
        *bash_turns("go build ./cmd/chat", "", call_id="t7"),
    ]
    raw = _on_branches(claude_transcript("on-branch", turns), switch_at=8, branch="ollama-chat")
    session = learn(container, api, team_a.headers, raw=raw, session_id="on-branch", project=PROJECT)
    assert session["status"] == "learned", session["stats"]

    memories = memories_of(api, team_a.headers, PROJECT)
    [before] = [m for m in memories if m["kind"] == "episode" and "pytest -q tests/unit" in m["content"]]
    [after] = [m for m in memories if m["kind"] == "episode" and "go build ./cmd/chat" in m["content"]]
    assert "branch" not in before["details"]
    assert after["details"]["branch"] == "ollama-chat"

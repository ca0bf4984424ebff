"""The pipeline on a real Gemini CLI 0.61.0 session, and sessions whose format is unknown or mismatched.

The Gemini session (tests/fixtures/transcripts/gemini-cli/cairn-capture) was recorded with Cairn's hooks: a
prompt stating a preference and a decision, shell calls (one failing), a write_file and a replace.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.pipeline_helpers import claude_transcript, learn, memories_of
from tests.paths import CLAUDE_SESSION, GEMINI_CAPTURE

pytestmark = [pytest.mark.integration, pytest.mark.slow]
HOOKED = GEMINI_CAPTURE / "session-2026-11-23T11-15-61508177.jsonl"
SID = "61508177-0a0f-41a2-a7d3-a8bbaca14342"
PROMPT = (
    "We always run ruff before committing, and we decided to keep the store in SQLite WAL mode rather than"
    " Postgres. Please check the project, run the tests and write notes.md recording that decision."
)


def _learned_kinds(memories) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for m in memories:
        if m["kind"] in ("preference", "decision", "fact"):
            kinds.setdefault(m["kind"], []).append(m["content"])
    return kinds


def test_a_real_gemini_session_is_learned_with_the_memories_a_claude_session_yields(container, api, team_a):
    gemini = learn(
        container,
        api,
        team_a.headers,
        raw=HOOKED.read_bytes(),
        session_id=SID,
        project="gemini-proj",
        agent="gemini-cli",
    )
    assert gemini["status"] == "learned", gemini["stats"]
    assert gemini["stats"]["parse"]["events"] == 13
    claude = learn(
        container,
        api,
        team_a.headers,
        raw=claude_transcript("claude-same", [("user", PROMPT)]),
        session_id="claude-same",
        project="claude-proj",
    )
    assert claude["status"] == "learned", claude["stats"]

    from_gemini = _learned_kinds(memories_of(api, team_a.headers, "gemini-proj"))
    from_claude = _learned_kinds(memories_of(api, team_a.headers, "claude-proj"))
    assert from_gemini and from_gemini == from_claude
    assert any("ruff" in text and "SQLite WAL" in text for text in from_gemini["preference"]), from_gemini


def test_the_gemini_session_is_searchable_as_excerpts_citing_its_commands(container, api, team_a):
    learn(
        container,
        api,
        team_a.headers,
        raw=HOOKED.read_bytes(),
        session_id=SID,
        project="gemini-proj",
        agent="gemini-cli",
    )
    excerpts = memories_of(api, team_a.headers, "gemini-proj", kind="excerpt")
    text = "\n".join(m["content"] for m in excerpts)
    assert "python3 -m pytest -q tests/test_missing.py" in text
    assert "notes.md" in text
    assert "cairn-context" not in text and "hook_context" not in text


def test_a_gemini_file_uploaded_as_claude_code_fails_with_the_reason(container, api, team_a):
    session = learn(
        container, api, team_a.headers, raw=HOOKED.read_bytes(), session_id="mislabelled", project="p"
    )
    assert session["status"] == "failed"
    error = session["stats"]["error"]
    assert error["stage"] == "parse" and error["code"] == "invalid_input"
    assert "Gemini CLI format but the session says it came from Claude Code" in error["message"]


def test_a_claude_file_uploaded_as_gemini_cli_fails_with_the_reason(container, api, team_a):
    session = learn(
        container,
        api,
        team_a.headers,
        raw=CLAUDE_SESSION.read_bytes(),
        session_id="mislabelled-2",
        project="p",
        agent="gemini-cli",
    )
    assert session["status"] == "failed"
    assert (
        "Claude Code format but the session says it came from Gemini CLI"
        in (session["stats"]["error"]["message"])
    )


def test_json_lines_of_an_unknown_format_fail_the_session_instead_of_learning_nothing(container, api, team_a):
    raw = b"".join(json.dumps({"event": "click", "n": i}).encode() + b"\n" for i in range(5))
    for agent in ("gemini-cli", "opencode", "claude-code"):
        session = learn(
            container, api, team_a.headers, raw=raw, session_id=f"unknown-{agent}", project="p", agent=agent
        )
        assert session["status"] == "failed", (agent, session["stats"])
        assert session["stats"]["error"]["code"] == "invalid_input"
        message = session["stats"]["error"]["message"]
        assert "not a" in message and "transcript" in message, message

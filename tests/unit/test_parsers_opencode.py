"""OpenCode sessions as Cairn's plugin exports them (a real one, tests/fixtures/.../opencode) into events."""

from __future__ import annotations

import json

import pytest
from cairn.transcripts import Role, parse_transcript
from cairn.transcripts.detect import detect_agent

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

SESSION = TRANSCRIPTS / "opencode" / "cairn-plugin" / "ses_df7d39bdfffeabie4lkmwy6rV0.jsonl"


def _records() -> list[dict]:
    return [json.loads(line) for line in SESSION.read_text().splitlines()]


def test_the_real_export_becomes_the_typed_prompt_a_shell_call_its_output_and_the_answer():
    parsed = parse_transcript(SESSION.read_bytes(), agent="opencode")
    assert parsed.agent == "opencode" and parsed.session_id == "ses_df7d39bdfffeabie4lkmwy6rV0"
    assert parsed.cwd == "/tmp/agents/project" and parsed.model == "fake-model"
    roles = [e.role for e in parsed.events]
    assert roles == [Role.USER, Role.TOOL_CALL, Role.TOOL_RESULT, Role.ASSISTANT]
    user, call, result, answer = parsed.events
    assert user.text.startswith("Please always use pnpm") and not user.text.startswith('"')  # run's quotes
    assert call.tool_name == "bash" and call.tool_input["command"] == "git status --short"
    assert result.tool_call_id == call.tool_call_id and not result.is_error
    assert answer.text == "Noted, thanks."
    assert parsed.stats.parsed == 4 and parsed.stats.malformed_lines == 0


def test_the_format_is_detected_without_an_agent_name():
    assert detect_agent(iter(_records())) == "opencode"
    assert parse_transcript(SESSION.read_bytes()).agent == "opencode"


def test_synthetic_parts_reasoning_and_a_failed_tool_are_read_as_opencode_means_them():
    info = {"id": "m2", "sessionID": "s", "role": "assistant", "time": {"created": 1, "completed": 2}}
    records = [
        {
            "info": {"id": "m1", "sessionID": "s", "role": "user"},
            "parts": [
                {"type": "text", "text": "fix the build"},
                {"type": "text", "text": "<file contents OpenCode attached>", "synthetic": True},
            ],
        },
        {
            "info": info,
            "parts": [
                {"type": "reasoning", "text": "the Makefile calls make recursively"},
                {"type": "reasoning", "text": "", "metadata": {"openai": {"itemId": "encrypted"}}},
                {
                    "type": "tool",
                    "tool": "bash",
                    "callID": "c1",
                    "state": {"status": "error", "input": {"command": "make"}, "error": "make: *** Error 2"},
                },
            ],
        },
    ]
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    parsed = parse_transcript(data, agent="opencode")
    assert [(e.role, e.text) for e in parsed.events] == [
        (Role.USER, "fix the build"),
        (Role.THINKING, "the Makefile calls make recursively"),  # visible reasoning: low trust, kept
        (Role.TOOL_CALL, ""),
        (Role.TOOL_RESULT, "make: *** Error 2"),
    ]
    assert parsed.events[3].is_error and parsed.stats.noise_dropped == {"reasoning": 1}  # encrypted only

"""Cursor agent transcripts into the event model.

NOT A CAPTURED FIXTURE: no Cursor build runs here (its `agent` CLI installs from cursor.com, not a package
registry, and needs an account), so these lines follow the shape two public integrations document from
files a real `agent` wrote (see transcripts/cursor.py). They pin the parser to that documented shape only.
"""

from __future__ import annotations

import json

import pytest
from cairn.domain.errors import InvalidInput
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import command_of, is_shell
from cairn.transcripts import Role, parse_transcript

from tests.paths import CLAUDE_SESSION

SESSION = [
    {"type": "metadata", "metadata": {"overview": "Set up the orders database"}},
    {
        "role": "user",
        "message": {
            "content": [
                {
                    "type": "text",
                    "text": "<timestamp>Monday, Nov 23, 2026</timestamp>\n<user_query>\nWe decided to use"
                    " PostgreSQL 16 for the orders service. Run the tests.\n</user_query>",
                }
            ]
        },
    },
    {
        "role": "assistant",
        "message": {
            "content": [
                {"type": "text", "text": "Running the tests first."},
                {
                    "type": "tool_use",
                    "name": "Shell",
                    "input": {"command": "pytest -q", "description": "tests"},
                },
            ]
        },
    },
    {
        "role": "assistant",
        "message": {"content": [{"type": "tool_use", "name": "Write", "input": {"path": "/w/notes.md"}}]},
    },
    {"role": "assistant", "message": {"content": [{"type": "text", "text": "Done: notes.md records it."}]}},
    {"type": "turn_ended", "status": "success"},
    {
        "role": "user",
        "message": {"content": [{"type": "text", "text": "<user_query>\nand lint\n</user_query>"}]},
    },
    {"type": "turn_ended", "status": "error", "error": "Model provider unavailable"},
]


def jsonl(objs: list[dict]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def test_the_documented_shape_is_detected_as_cursor_and_read_in_order():
    parsed = parse_transcript(jsonl(SESSION), filename="0f3c2a.jsonl")

    assert parsed.agent == "cursor" and parsed.stats.skipped_unknown == {}
    assert [(e.role, e.text, e.tool_name) for e in parsed.events] == [
        (Role.USER, "We decided to use PostgreSQL 16 for the orders service. Run the tests.", None),
        (Role.ASSISTANT, "Running the tests first.", None),
        (Role.TOOL_CALL, "", "Shell"),
        (Role.TOOL_CALL, "", "Write"),
        (Role.ASSISTANT, "Done: notes.md records it.", None),
        (Role.USER, "and lint", None),
        (Role.SYSTEM, "Model provider unavailable", None),
    ]
    assert parsed.events[-1].is_error


def test_a_shell_call_is_a_command_without_an_outcome_since_cursor_writes_no_results():
    docs = [EventDoc.of(e) for e in parse_transcript(jsonl(SESSION)).events]

    assert [command_of(d) for d in docs if is_shell(d)] == ["pytest -q"]
    assert not [d for d in docs if d.role is Role.TOOL_RESULT]


def test_cursor_and_claude_code_are_never_read_with_each_others_parser():
    with pytest.raises(InvalidInput, match="in Cursor format but the session says it came from Claude"):
        parse_transcript(jsonl(SESSION), agent="claude-code")
    with pytest.raises(InvalidInput, match="in Claude Code format but the session says it came from Cursor"):
        parse_transcript(CLAUDE_SESSION.read_bytes(), agent="cursor")


def test_json_lines_of_another_shape_claimed_by_cursor_fail_clearly():
    with pytest.raises(InvalidInput, match="not a Cursor transcript"):
        parse_transcript(jsonl([{"role": "user", "content": "x", "type": "note"}]), agent="cursor")

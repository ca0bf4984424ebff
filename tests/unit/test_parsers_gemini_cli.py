"""Gemini CLI session files into the event model: the real 0.61.0 capture, JSONL rules, legacy files."""

from __future__ import annotations

import json

import pytest
from cairn.domain.errors import InvalidInput
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import command_of, edited_path, is_edit, is_shell
from cairn.transcripts import Role, parse_transcript

from tests.paths import CLAUDE_SESSION, GEMINI_CAPTURE

HOOKED = GEMINI_CAPTURE / "session-2026-11-23T11-15-61508177.jsonl"
PLAIN = GEMINI_CAPTURE / "session-2026-11-23T11-15-eb1eac0c.jsonl"
PROMPT = (
    "We always run ruff before committing, and we decided to keep the store in SQLite WAL mode rather than"
    " Postgres. Please check the project, run the tests and write notes.md recording that decision."
)


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def jsonl(objs: list[dict]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def test_the_real_session_is_detected_as_gemini_cli_with_its_metadata():
    parsed = parse_transcript(HOOKED.read_bytes(), filename=HOOKED.name)

    assert parsed.agent == "gemini-cli"
    assert parsed.session_id == "61508177-0a0f-41a2-a7d3-a8bbaca14342"
    assert parsed.started_at == "2026-11-23T11:15:44.657Z"
    assert parsed.model == "gemini-3.1-pro-preview"
    assert parsed.cwd == "/tmp/gem/proj"  # read from the start-up context's workspace directories
    assert parsed.stats.skipped_unknown == {} and parsed.stats.parsed == parsed.stats.lines == 31


def test_the_prompt_is_kept_without_the_start_up_or_hook_context():
    parsed = parse_transcript(HOOKED.read_bytes())

    [user] = parsed.by_role(Role.USER)
    assert user.text == PROMPT and user.line_no == 3
    assert parsed.stats.noise_dropped["environment_context"] == 1  # <session_context>
    assert parsed.stats.noise_dropped["hook_context"] == 1  # Cairn's own context, HTML-escaped


def test_shell_calls_map_to_commands_with_their_outcome():
    parsed = parse_transcript(HOOKED.read_bytes())
    docs = [EventDoc.of(e) for e in parsed.events]
    results = {d.tool_call_id: d for d in docs if d.role is Role.TOOL_RESULT}

    shells = [(command_of(d), results[d.tool_call_id].is_error) for d in docs if is_shell(d)]

    assert shells == [
        ("ls -la && git status --short", False),
        ("python3 -m pytest -q tests/test_missing.py", True),  # "Exit Code: 4"
        ("python3 -m pytest -q tests", False),
    ]
    failing = results[docs[4].tool_call_id]
    assert failing.text.startswith("no tests ran") and "untrusted_context" not in failing.text
    assert "Process Group PGID" not in failing.text


def test_write_file_and_replace_are_edits_of_their_file():
    docs = [EventDoc.of(e) for e in parse_transcript(HOOKED.read_bytes()).events]

    assert [(d.tool_name, edited_path(d)) for d in docs if is_edit(d)] == [
        ("write_file", "/tmp/gem/proj/notes.md"),
        ("replace", "/tmp/gem/proj/notes.md"),
    ]


def test_each_tool_result_appears_once_although_gemini_echoes_it_as_a_user_message():
    parsed = parse_transcript(PLAIN.read_bytes())

    calls = parsed.by_role(Role.TOOL_CALL)
    results = parsed.by_role(Role.TOOL_RESULT)
    assert len(calls) == len(results) == 4
    assert [r.tool_call_id for r in results] == [c.tool_call_id for c in calls]
    assert parsed.stats.ignored["tool_response_echo"] == 4


def test_a_message_written_again_keeps_its_place_and_its_last_content():
    parsed = parse_transcript(PLAIN.read_bytes())

    roles = [e.role for e in parsed.events]
    assert roles[:3] == [Role.USER, Role.ASSISTANT, Role.TOOL_CALL]
    assert [e.text for e in parsed.by_role(Role.ASSISTANT)] == [
        "I'll look at the project first.",
        "Done. I noted the decision to keep SQLite in WAL mode and will run ruff before every commit"
        " as you prefer.",
    ]
    assert parsed.stats.noise_dropped["reasoning"] == 1  # thoughts are private reasoning, not kept


def test_a_rewind_drops_the_rewound_message_and_everything_after_it():
    lines = records(PLAIN)
    second_user = next(r for r in lines if r.get("type") == "user" and "functionResponse" in str(r))
    data = jsonl([*lines, {"$rewindTo": second_user["id"]}])

    parsed = parse_transcript(data)

    assert [e.role for e in parsed.events] == [Role.USER, Role.ASSISTANT, Role.TOOL_CALL, Role.TOOL_RESULT]
    assert parsed.stats.noise_dropped["rewound"] > 0


def test_the_legacy_single_document_format_gives_the_same_events():
    lines = records(PLAIN)
    messages: dict[str, dict] = {}
    for record in lines[1:]:
        if "$set" in record and "messages" in record["$set"]:
            messages = {m["id"]: m for m in record["$set"]["messages"]}
        elif "id" in record:
            messages[record["id"]] = record
    legacy = {**lines[0], "messages": list(messages.values())}
    data = json.dumps(legacy, indent=2).encode()

    parsed = parse_transcript(data)

    expected = parse_transcript(PLAIN.read_bytes())
    assert parsed.agent == "gemini-cli" and parsed.session_id == expected.session_id
    assert [(e.role, e.text, e.tool_name, e.tool_input) for e in parsed.events] == [
        (e.role, e.text, e.tool_name, e.tool_input) for e in expected.events
    ]
    assert parsed.stats.malformed_lines == 0


def test_a_gemini_session_is_never_read_as_claude_code():
    data = HOOKED.read_bytes()

    assert parse_transcript(data).agent == "gemini-cli"
    assert parse_transcript(data, agent="gemini").agent == "gemini-cli"
    with pytest.raises(InvalidInput, match="in Gemini CLI format but the session says it came from Claude"):
        parse_transcript(data, agent="claude-code")


def test_a_claude_code_transcript_claimed_by_gemini_cli_is_refused():
    with pytest.raises(InvalidInput, match="in Claude Code format but the session says it came from Gemini"):
        parse_transcript(CLAUDE_SESSION.read_bytes(), agent="gemini-cli")


def test_an_agent_without_a_parser_is_read_by_its_content_or_refused_clearly():
    assert parse_transcript(PLAIN.read_bytes(), agent="generic").agent == "gemini-cli"
    with pytest.raises(InvalidInput, match="the session says 'windsurf'"):
        parse_transcript(jsonl([{"info": {"id": "ses_1"}}, {"part": "x"}]), agent="windsurf")


def test_a_hostile_list_where_a_type_or_a_status_belongs_is_refused_or_skipped_never_a_crash():
    with pytest.raises(InvalidInput):
        parse_transcript(jsonl([{"type": [], "id": ""}]), "gemini-cli")
    call = {"id": "c1", "name": "run_shell_command", "args": {}, "status": ["error"], "result": None}
    message = {"id": "m1", "type": "gemini", "content": "running it", "toolCalls": [call]}
    parsed = parse_transcript(jsonl([{"sessionId": "s1"}, message]), "gemini-cli")
    assert [e.role for e in parsed.events if e.role is Role.TOOL_CALL]

"""What `opencode export` prints (one pretty-printed JSON document per session) read as OpenCode events.

The samples are real exports (tests/fixtures/transcripts/opencode/session-bridge, see SOURCE.md): a whole
four-message session, and six messages of a long one kept as OpenCode wrote them.
"""

from __future__ import annotations

import json

import pytest
from cairn.domain.errors import InvalidInput
from cairn.project_files import ProjectFile, to_jsonl
from cairn.transcripts import Role, parse_transcript

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

EXPORTS = TRANSCRIPTS / "opencode" / "session-bridge"
LICENSE_SESSION = EXPORTS / "ses_27a3283eeffe2okXvUQaxKJ0Nw.json"
COMPACTED = EXPORTS / "ses_277daa810ffePOBsdfS6gm8uA2.trimmed.json"


def test_an_export_document_is_detected_and_read_as_the_prompt_reasoning_tools_and_answer():
    parsed = parse_transcript(LICENSE_SESSION.read_bytes(), filename=LICENSE_SESSION.name)

    assert parsed.agent == "opencode" and parsed.session_id == "ses_27a3283eeffe2okXvUQaxKJ0Nw"
    assert parsed.cwd == "/Users/savekirk/dev/ai/entire/session-bridge"
    assert parsed.version == "1.4.3" and parsed.model == "gpt-5.4"
    assert parsed.started_at == "2026-04-13T07:45:29.617000+00:00"  # the session's `time.created`
    roles = [e.role for e in parsed.events]
    assert roles == [
        Role.USER,
        *[Role.THINKING] * 2,
        Role.ASSISTANT,
        *[Role.TOOL_CALL, Role.TOOL_RESULT] * 2,
        *[Role.THINKING] * 2,
        Role.ASSISTANT,
        Role.TOOL_CALL,
        Role.TOOL_RESULT,
        Role.ASSISTANT,
    ]
    prompt = parsed.events[0]
    assert prompt.text == "Create LICENSE.md file with MIT license"
    assert parsed.events[1].text.startswith("**Creating LICENSE file**")
    glob, globbed = parsed.events[4:6]
    assert glob.tool_name == "glob" and glob.tool_input == {
        "pattern": "LICENSE*",
        "path": "/Users/savekirk/dev/ai/entire/session-bridge",
    }
    assert globbed.tool_call_id == glob.tool_call_id and globbed.text == "No files found"
    patch, patched = parsed.events[11:13]
    assert patch.tool_name == "apply_patch" and "*** Add File: LICENSE.md" in patch.tool_input["patchText"]
    assert patched.text.startswith("Success. Updated the following files:") and not patched.is_error
    assert parsed.events[-1].text.startswith("Created `LICENSE.md` with the MIT license.")
    assert parsed.stats.parsed == 5 and parsed.stats.skipped_unknown == {}  # the session and 4 messages


def test_each_event_keeps_the_line_its_message_starts_on_in_the_pretty_printed_file():
    lines = LICENSE_SESSION.read_text().splitlines()
    parsed = parse_transcript(LICENSE_SESSION.read_bytes())

    assert sorted({e.line_no for e in parsed.events}) == [20, 56, 227, 388]
    assert all(lines[n - 1] == "    {" for n in (20, 56, 227, 388))  # each a message of `messages`
    assert parsed.stats.lines == len([ln for ln in lines if ln.strip()])


def test_a_compaction_a_synthetic_prompt_and_a_failed_write_are_read_as_opencode_means_them():
    parsed = parse_transcript(COMPACTED.read_bytes(), agent="opencode")

    assert [(e.role, e.tool_name) for e in parsed.events] == [
        (Role.THINKING, None),
        (Role.SUMMARY, None),  # the assistant message OpenCode marks `summary: true`
        (Role.TOOL_CALL, "bash"),
        (Role.TOOL_RESULT, "bash"),
        (Role.TOOL_CALL, "write"),
        (Role.TOOL_RESULT, "write"),
        (Role.TOOL_CALL, "edit"),
        (Role.TOOL_RESULT, "edit"),
    ]
    assert parsed.events[1].text.startswith("## Goal")
    failed = parsed.events[5]
    assert failed.is_error and failed.text.startswith("You must read file")
    edit = parsed.events[6]
    assert {"filePath", "oldString", "newString"} <= set(edit.tool_input)
    # neither the compaction marker nor "Continue if you have next steps" (synthetic) was typed by anyone
    assert not parsed.by_role(Role.USER) and parsed.stats.ignored["user:no_text"] == 2


def test_an_export_on_one_line_reads_the_same_as_the_pretty_printed_one():
    pretty = parse_transcript(LICENSE_SESSION.read_bytes())
    one_line = json.dumps(json.loads(LICENSE_SESSION.read_bytes())).encode() + b"\n"

    compact = parse_transcript(one_line)

    assert compact.agent == "opencode" and compact.session_id == pretty.session_id
    assert [(e.role, e.text, e.tool_input) for e in compact.events] == [
        (e.role, e.text, e.tool_input) for e in pretty.events
    ]


def test_the_project_files_a_capture_appends_after_the_document_are_kept_beside_the_session():
    manifest = ProjectFile(root=".", path="package.json", text='{"scripts": {"test": "vscode-test"}}')

    parsed = parse_transcript(LICENSE_SESSION.read_bytes() + to_jsonl([manifest]), agent="opencode")

    assert [f.path for f in parsed.project_files] == ["package.json"]
    assert len(parsed.events) == 14


def test_an_export_uploaded_as_another_agent_is_refused_with_the_format_it_is_in():
    with pytest.raises(InvalidInput, match="OpenCode format but the session says it came from Codex"):
        parse_transcript(LICENSE_SESSION.read_bytes(), agent="codex")


def test_a_pretty_printed_document_of_no_known_agent_is_refused_as_such():
    other = json.dumps({"name": "session-bridge", "messages": ["not", "a", "session"]}, indent=2).encode()

    with pytest.raises(InvalidInput, match="one JSON document, but neither a Gemini CLI session nor"):
        parse_transcript(other)

"""Redaction on the machine of transcripts OpenCode writes: `opencode export` documents (one pretty-printed
JSON document, tests/fixtures/transcripts/opencode/session-bridge) and the plugin's JSON lines."""

from __future__ import annotations

import json

import pytest
from cairn.redaction import redact_bytes_jsonl
from cairn.transcripts import Role, parse_transcript

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

EXPORT = TRANSCRIPTS / "opencode" / "session-bridge" / "ses_27a3283eeffe2okXvUQaxKJ0Nw.json"
TOKEN = "gh" + "p_" + "Zx9Q2mLk8Vt4Rb7Np3Wc6Hy1Jd5Gf0KsAe" + "ab"
# what a Claude model's tool call is named when OpenCode runs it through GitHub Copilot (seen in the
# session-bridge set): high entropy, and all that pairs the call with its result
CLAUDE_CALL_ID = "toolu_vrtx_011h1MokVoSeABEerbY2J9he"


def test_an_export_without_secrets_is_uploaded_byte_for_byte():
    data = EXPORT.read_bytes()

    assert redact_bytes_jsonl(data) == (data, {})  # its encrypted reasoning ids are no secrets


def test_a_secret_in_an_export_is_redacted_and_the_document_still_reads_as_the_same_session():
    document = json.loads(EXPORT.read_bytes())
    document["messages"][0]["parts"][0]["text"] = f"Create LICENSE.md; the token is {TOKEN}"
    data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()

    redacted, counts = redact_bytes_jsonl(data)

    assert counts == {"github_token": 1} and TOKEN.encode() not in redacted
    assert redacted.startswith(b'{\n  "info": {')  # still the pretty-printed document OpenCode wrote
    before, after = parse_transcript(data), parse_transcript(redacted)
    assert after.events[0].text == "Create LICENSE.md; the token is [REDACTED:github_token]"
    assert [(e.role, e.line_no, e.tool_call_id) for e in after.events] == [
        (e.role, e.line_no, e.tool_call_id) for e in before.events
    ]


def test_opencodes_call_ids_survive_so_each_call_keeps_its_result():
    info = {"id": "msg_1", "sessionID": "ses_1", "role": "assistant", "time": {"created": 1}}
    parts = [
        {
            "type": "tool",
            "tool": "read",
            "callID": CLAUDE_CALL_ID,
            "sessionID": "ses_1",
            "messageID": "msg_1",
            "state": {"status": "completed", "input": {"filePath": "/w/a.ts"}, "output": "export {}"},
        }
    ]
    line = json.dumps({"info": info, "parts": parts}).encode() + b"\n"

    redacted, counts = redact_bytes_jsonl(line)

    assert (redacted, counts) == (line, {})
    call, result = parse_transcript(redacted, agent="opencode").events
    assert call.role is Role.TOOL_CALL and result.tool_call_id == call.tool_call_id == CLAUDE_CALL_ID


def test_the_project_files_after_a_document_are_redacted_as_json_lines():
    project_file = {
        "type": "cairn.project_file",
        "root": "/w",
        "path": ".env",
        "text": f"GITHUB_TOKEN={TOKEN}",
    }
    data = EXPORT.read_bytes() + json.dumps(project_file).encode() + b"\n"

    redacted, counts = redact_bytes_jsonl(data)

    assert counts == {"github_token": 1}
    assert redacted.startswith(EXPORT.read_bytes())
    assert json.loads(redacted.splitlines()[-1])["text"] == "GITHUB_TOKEN=[REDACTED:github_token]"

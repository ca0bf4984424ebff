"""Copilot CLI `events.jsonl` into the event model: a real 1.0.64 session, detection, its event kinds."""

from __future__ import annotations

import gzip
import json

import pytest
from cairn.capture.upload import prepare
from cairn.domain.errors import InvalidInput
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import command_of, edited_path, is_edit, is_shell
from cairn.transcripts import Role, parse_transcript

from tests.paths import CLAUDE_SESSION, TRANSCRIPTS

AGENTV = TRANSCRIPTS / "copilot-cli" / "agentv" / "events-10fb4666.jsonl"
CAPTURE = TRANSCRIPTS / "copilot-cli" / "cairn-capture" / "events-800b4105.jsonl"


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def jsonl(objs: list[dict]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def event(kind: str, data: dict, n: int) -> dict:
    return {
        "type": kind,
        "data": data,
        "id": f"e{n}",
        "timestamp": f"2026-11-23T10:00:{n:02d}Z",
        "parentId": None,
    }


def test_the_real_session_is_detected_as_copilot_cli_with_its_metadata():
    parsed = parse_transcript(AGENTV.read_bytes(), filename=AGENTV.name)

    assert parsed.agent == "copilot-cli"
    assert parsed.session_id == "10fb4666-56f0-4352-90fc-715caf95b418"
    assert parsed.version == "1.0.64" and parsed.model == "claude-sonnet-4.6"
    assert parsed.cwd == "/home/entity/projects/EntityProcess/agentv"
    assert (parsed.git_branch, parsed.git_commit) == ("main", "cbee02b54dc39c0c5333939d77d5c4bbe02d2d74")
    assert parsed.started_at == "2026-06-25T01:50:34.040Z"
    assert parsed.stats.skipped_unknown == {} and parsed.stats.parsed == parsed.stats.lines == 551


def test_the_typed_prompt_is_kept_not_what_the_cli_sent_the_model():
    parsed = parse_transcript(AGENTV.read_bytes())

    [user] = parsed.by_role(Role.USER)
    assert user.text.startswith("investigate why i get") and user.text.endswith("and fix")
    assert "<current_datetime>" not in user.text and "system_reminder" not in user.text
    assert "You are the GitHub Copilot CLI" not in " ".join(e.text for e in parsed.events)  # system prompt


def test_each_requested_call_appears_once_with_its_result_and_reasoning_is_dropped():
    parsed = parse_transcript(AGENTV.read_bytes())
    calls, results = parsed.by_role(Role.TOOL_CALL), parsed.by_role(Role.TOOL_RESULT)

    assert len(calls) == len(results) == 68  # execution_start repeats the request: not a second call
    assert {c.tool_call_id for c in calls} == {r.tool_call_id for r in results}
    assert parsed.stats.ignored["tool.execution_start"] == 68
    assert parsed.stats.noise_dropped["reasoning"] == 22
    assert parsed.by_role(Role.ASSISTANT)[-1].text.startswith("**Root cause & fix summary:**")


def test_shell_calls_map_to_commands_and_the_exit_code_trailer_becomes_the_outcome():
    docs = [EventDoc.of(e) for e in parse_transcript(AGENTV.read_bytes()).events]
    results = {d.tool_call_id: d for d in docs if d.role is Role.TOOL_RESULT}
    shells = [(command_of(d), results[d.tool_call_id]) for d in docs if is_shell(d)]

    assert len(shells) == 61
    assert shells[1][0] == 'which entire 2>/dev/null && entire --version 2>/dev/null; echo "exit: $?"'
    assert not shells[1][1].is_error and shells[1][1].text.endswith("exit: 0")
    assert "<shellId:" not in " ".join(r.text for _, r in shells)
    failed = [r for _, r in shells if r.is_error]
    assert failed and all(r.line_no in (443, 452) for r in failed)  # "exit code 1" and "exit code 128"


def test_a_failed_tool_keeps_its_error_message():
    parsed = parse_transcript(AGENTV.read_bytes())

    [stopped] = [r for r in parsed.by_role(Role.TOOL_RESULT) if r.line_no == 285]
    assert stopped.is_error and stopped.text.startswith("shellId: 30 was already stopped via stop_bash.")


def test_the_edit_tool_is_an_edit_of_its_file():
    docs = [EventDoc.of(e) for e in parse_transcript(AGENTV.read_bytes()).events]

    assert [(d.tool_name, edited_path(d)) for d in docs if is_edit(d)] == [
        ("edit", "/home/entity/projects/EntityProcess/agentv/.github/hooks/entire.json")
    ]


def test_compaction_summaries_errors_rewinds_and_subagent_work_are_read_as_copilot_means_them():
    start = records(AGENTV)[0]
    data = jsonl(
        [
            start,
            event("user.message", {"content": "first try", "transformedContent": "ctx first try"}, 1),
            event(
                "assistant.message", {"messageId": "m1", "content": "rewound answer", "toolRequests": []}, 2
            ),
            event("session.snapshot_rewind", {"upToEventId": "e1", "eventIds": ["e1", "e2"]}, 3),
            event("user.message", {"content": "Use pnpm, never npm."}, 4),
            {
                **event("tool.execution_start", {"toolCallId": "t9", "toolName": "view", "arguments": {}}, 5),
                "agentId": "sub-1",
            },
            event("session.compaction_complete", {"success": True, "summaryContent": "We chose pnpm."}, 6),
            event("session.error", {"errorType": "model", "message": "rate limited"}, 7),
            event("canvas.brand_new_kind", {}, 8),
        ]
    )

    parsed = parse_transcript(data)

    assert [(e.role, e.text, e.is_sidechain) for e in parsed.events] == [
        (Role.USER, "Use pnpm, never npm.", False),
        (Role.TOOL_CALL, "", True),  # a subagent's call no message of this file requested
        (Role.SUMMARY, "We chose pnpm.", False),
        (Role.SYSTEM, "rate limited", False),
    ]
    assert parsed.stats.noise_dropped["rewound"] == 2
    assert parsed.stats.skipped_unknown == {"canvas.brand_new_kind": 1}


def test_a_copilot_session_is_never_read_with_another_agents_parser():
    data = AGENTV.read_bytes()

    assert parse_transcript(data, agent="copilot").agent == "copilot-cli"
    assert parse_transcript(data, agent="generic").agent == "copilot-cli"  # no parser of its own: content
    with pytest.raises(InvalidInput, match="in Copilot CLI format but the session says it came from Claude"):
        parse_transcript(data, agent="claude-code")
    with pytest.raises(InvalidInput, match="in Claude Code format but the session says it came from Copilot"):
        parse_transcript(CLAUDE_SESSION.read_bytes(), agent="copilot-cli")


def test_json_lines_in_no_known_shape_claimed_by_copilot_fail_clearly():
    with pytest.raises(InvalidInput, match="not a Copilot CLI transcript"):
        parse_transcript(jsonl([{"type": "hello", "x": 1}, {"type": "world"}]), agent="copilot-cli")


def test_redaction_before_upload_keeps_the_ids_that_pair_each_call_with_its_own_result():
    prepared = prepare(AGENTV.read_bytes())
    parsed = parse_transcript(gzip.decompress(prepared.data))

    assert prepared.redactions == {}  # tool call ids such as toolu_bdrk_01SMx... are not secrets
    calls = {c.tool_call_id for c in parsed.by_role(Role.TOOL_CALL)}
    assert len(calls) == 68 and calls == {r.tool_call_id for r in parsed.by_role(Role.TOOL_RESULT)}


def test_a_session_of_the_current_cli_keeps_the_typed_prompt_not_the_hook_context_the_model_got():
    parsed = parse_transcript(CAPTURE.read_bytes())

    assert (parsed.agent, parsed.version, parsed.stats.skipped_unknown) == ("copilot-cli", "1.0.102", {})
    assert [(e.role, e.tool_name, e.is_error) for e in parsed.events] == [
        (Role.USER, None, False),
        (Role.TOOL_CALL, "bash", False),
        (Role.TOOL_RESULT, None, True),  # shellExecution.exitCode 1
        (Role.ASSISTANT, None, False),
    ]
    assert parsed.events[0].text.startswith("We always run ruff before committing")
    assert "CTX-FROM-PROMPT" not in " ".join(e.text for e in parsed.events)  # the hook's additionalContext
    assert parsed.events[2].text == "/usr/bin/python3: No module named pytest"

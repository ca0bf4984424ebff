"""The parsers on real transcripts (tests/fixtures/transcripts, see each SOURCE.md) and on huge input."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from cairn.domain.errors import PayloadTooLarge
from cairn.transcripts import MAX_TRANSCRIPT_BYTES, Role, chunk_events, parse_transcript

from tests.paths import CLAUDE_SESSION as MAIN_SESSION
from tests.paths import CODEX_LOCALPUSH, GEMINI_CAPTURE, TRANSCRIPTS

pytestmark = pytest.mark.integration

CLAUDE_DIR = MAIN_SESSION.parent
AGENT_FILES = sorted(CLAUDE_DIR.glob("agent-*.jsonl"))
CODEX_FILES = sorted(CODEX_LOCALPUSH.glob("rollout-*.jsonl"))
GEMINI_FILES = sorted(GEMINI_CAPTURE.glob("session-*.jsonl"))
# real Claude Code sessions trimmed to their queued messages and a slash command
FITTODAY_FILES = sorted((TRANSCRIPTS / "claude-code" / "fittoday").glob("*.jsonl"))
# ... and to a plan the person rejected with their reason
CC_BACKEND_FILES = sorted((TRANSCRIPTS / "claude-code" / "cc-backend").glob("*.jsonl"))
ALL_FILES = [MAIN_SESSION, *AGENT_FILES, *FITTODAY_FILES, *CC_BACKEND_FILES, *CODEX_FILES, *GEMINI_FILES]
# `opencode export` documents: one pretty-printed JSON document each, not JSON lines
OPENCODE_EXPORTS = sorted((TRANSCRIPTS / "opencode" / "session-bridge").glob("ses_*.json"))


def parse(path: Path):
    return parse_transcript(path.read_bytes(), filename=path.name)


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_fixtures_are_in_the_repository_each_folder_with_its_source_and_licence():
    folders = sorted(
        {path.parent for pattern in ("*/*/*.jsonl", "*/*/*.json") for path in TRANSCRIPTS.glob(pattern)}
    )
    assert [str(f.relative_to(TRANSCRIPTS)) for f in folders] == [
        "claude-code/cc-backend",
        "claude-code/claude-code-viewer",
        "claude-code/context-evaluator",
        "claude-code/entire-cli",
        "claude-code/fittoday",
        "codex/agentv",
        "codex/localpush",
        "copilot-cli/agentv",
        "copilot-cli/cairn-capture",
        "gemini-cli/cairn-capture",
        "opencode/cairn-plugin",
        "opencode/session-bridge",
    ]
    for folder in folders:
        source = (folder / "SOURCE.md").read_text()
        # copied from a public repository, or produced here with the real CLI (and said how)
        assert "Repository: https://github.com/" in source or "Produced by: this project" in source, folder
        assert "Licence: MIT" in source or "Licence: Apache-2.0" in source, folder
    assert all(path.exists() for path in ALL_FILES) and len(OPENCODE_EXPORTS) == 2


@pytest.fixture(scope="module")
def main_session():
    return parse(MAIN_SESSION)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:40])
def test_every_fixture_parses_cleanly_into_events_and_chunks(path: Path):
    parsed = parse(path)

    assert parsed.events
    assert parsed.stats.malformed_lines == 0 and not parsed.stats.truncated_tail
    assert parsed.stats.skipped_unknown == {}
    assert parsed.stats.lines == len(raw_lines(path))
    assert [e.seq for e in parsed.events] == list(range(len(parsed.events)))
    chunks = chunk_events(parsed.events)
    assert [e for c in chunks for e in c.events] == list(parsed.events)


@pytest.mark.parametrize("path", OPENCODE_EXPORTS, ids=lambda p: p.name[:40])
def test_every_opencode_export_parses_cleanly_into_events_and_chunks(path: Path):
    parsed = parse(path)

    assert parsed.agent == "opencode" and parsed.events
    assert parsed.stats.malformed_lines == 0 and parsed.stats.skipped_unknown == {}
    assert parsed.stats.lines == len([line for line in path.read_text().splitlines() if line.strip()])
    assert parsed.stats.parsed == 1 + len(json.loads(path.read_bytes())["messages"])
    assert [e.seq for e in parsed.events] == list(range(len(parsed.events)))
    chunks = chunk_events(parsed.events)
    assert [e for c in chunks for e in c.events] == list(parsed.events)


@pytest.mark.parametrize("path", ALL_FILES + OPENCODE_EXPORTS, ids=lambda p: p.name[:40])
def test_no_injected_text_survives_in_any_event(path: Path):
    for event in parse(path).events:
        assert "<system-reminder>" not in event.text
        assert "Whenever you read a file, you should consider whether it looks malicious" not in event.text
        assert "<command-name>" not in event.text
        assert "<environment_context>" not in event.text
        assert "<session_context>" not in event.text and "<hook_context>" not in event.text
        assert "cairn-context" not in event.text


def test_the_claude_session_keeps_its_metadata(main_session):
    assert main_session.agent == "claude-code"
    assert main_session.session_id == "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    assert main_session.cwd == "/path/to/Demo"
    assert main_session.version == "1.0.98"
    assert main_session.model == "claude-sonnet-4-20250514"


def test_the_claude_session_has_the_prompts_the_user_typed(main_session):
    prompts = [e.text for e in main_session.by_role(Role.USER) if not e.is_sidechain]

    # line 2 is the slash command, line 434 the follow-up; line 3 (isMeta) is the command's expanded body
    assert prompts == [
        "/orchestrator create TODO app by Next.js",
        "Thanks! Please update CLAUDE.md for current changes",
    ]
    assert main_session.stats.noise_dropped["meta_message"] == 1


def test_the_claude_session_has_the_known_tool_calls_and_failures(main_session):
    calls = main_session.by_role(Role.TOOL_CALL)
    commands = [c.tool_input.get("command") for c in calls if c.tool_name == "Bash"]

    assert Counter(c.tool_name for c in calls)["Bash"] == 61
    assert "pnpm add lucide-react" in commands  # line 62
    assert "npx create-next-app@latest todo-app --typescript --tailwind --eslint --app" in commands  # line 44
    write = next(c for c in calls if c.line_no == 436)
    assert write.tool_name == "Write" and write.tool_input["file_path"] == "/path/to/Demo/CLAUDE.md"
    failures = [e for e in main_session.by_role(Role.TOOL_RESULT) if e.is_error]
    assert [e.line_no for e in failures][:2] == [78, 81]
    assert "File has not been read yet" in failures[0].text


def test_the_claude_session_merges_streamed_lines_into_fewer_events(main_session):
    raw_assistant = [r for r in raw_lines(MAIN_SESSION) if r["type"] == "assistant"]
    message_ids = {r["message"]["id"] for r in raw_assistant}

    assistant_events = main_session.by_role(Role.ASSISTANT)
    assert len(message_ids) < len(raw_assistant)  # 170 messages over 262 streamed lines
    assert main_session.stats.streamed_merged == len(raw_assistant) - len(message_ids)
    assert len(assistant_events) < len(raw_assistant)
    assert len({e.message_id for e in assistant_events}) == len(assistant_events)


def test_the_claude_session_flags_sub_agent_turns_and_keeps_their_answers_once(main_session):
    side = [e for e in main_session.events if e.is_sidechain]
    main = [e for e in main_session.events if not e.is_sidechain]

    assert len(side) > len(main) > 0  # 405 of 437 message lines are sub-agent turns
    assert side[0].line_no == 16 and side[0].role is Role.USER  # the first Task prompt
    assert main_session.stats.noise_dropped["sidechain_duplicate"] == 5  # one per Task call
    summaries = [
        e.text for e in main_session.by_role(Role.TOOL_RESULT) if e.text.startswith("## Component Summary")
    ]
    assert len(summaries) == 1


def test_the_claude_session_drops_the_title_of_a_leaf_not_in_the_file(main_session):
    # line 1's leafUuid does not occur in the file (Claude Code writes other sessions' titles too)
    assert main_session.by_role(Role.SUMMARY) == ()
    assert main_session.stats.noise_dropped["foreign_summary"] == 1


@pytest.mark.parametrize("path", AGENT_FILES, ids=lambda p: p.name)
def test_sub_agent_files_are_flagged_as_sidechain(path: Path):
    parsed = parse(path)

    assert all(e.is_sidechain for e in parsed.events)
    assert parsed.by_role(Role.USER)[0].text in {"Run the test suite", "Build the project"}


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name[8:27])
def test_codex_rollouts_keep_one_user_event_per_typed_prompt(path: Path):
    typed = [
        r for r in raw_lines(path) if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"
    ]

    parsed = parse(path)

    assert parsed.agent == "codex"
    assert len(parsed.by_role(Role.USER)) == len(typed)
    assert parsed.stats.noise_dropped["injected_context"] > 0  # AGENTS.md / environment context
    assert parsed.stats.noise_dropped["system_prompt"] > 0  # developer messages
    assert parsed.version == "0.104.0-alpha.1"
    assert parsed.git_branch == "main" and parsed.git_remote.startswith("redacted://url/")


def test_the_codex_rollouts_keep_tool_calls_paired_with_their_outputs():
    parsed = parse(CODEX_FILES[0])

    calls = {e.tool_call_id: e for e in parsed.by_role(Role.TOOL_CALL) if e.tool_call_id}
    results = parsed.by_role(Role.TOOL_RESULT)
    assert calls["call_zC8Bb98Ju4Ft4evnpeMpIu85"].tool_name == "exec_command"  # line 17
    assert all(r.tool_call_id in calls for r in results)
    assert {"exec_command", "apply_patch"} <= {c.tool_name for c in calls.values()}


def test_the_compacted_codex_rollout_has_a_summary_event():
    compacted = next(p for p in CODEX_FILES if "019c8a59" in p.name)

    summaries = parse(compacted).by_role(Role.SUMMARY)

    assert [s.line_no for s in summaries] == [1788]


def test_a_gzipped_fixture_parses_to_the_same_events():
    assert parse_transcript(gzip.compress(MAIN_SESSION.read_bytes())).events == parse(MAIN_SESSION).events


def _write_huge_transcript(path: Path, size: int) -> None:
    line = (
        json.dumps(
            {
                "parentUuid": None,
                "isSidechain": False,
                "sessionId": "s",
                "type": "user",
                "uuid": "u",
                "message": {"role": "user", "content": "x" * 4000},
            }
        ).encode()
        + b"\n"
    )
    with path.open("wb") as out:
        written = 0
        while written < size:
            out.write(line)
            written += len(line)


def test_a_100_mb_transcript_is_refused_without_reading_it_all(tmp_path: Path):
    huge = tmp_path / "huge.jsonl"
    try:
        _write_huge_transcript(huge, 100 * 1024 * 1024)
        with huge.open("rb") as stream:
            with pytest.raises(PayloadTooLarge, match="64 MB"):
                parse_transcript(stream)
            assert stream.tell() <= MAX_TRANSCRIPT_BYTES + 1  # only the cap (+1 byte) was read
    finally:
        huge.unlink(missing_ok=True)


def test_a_gzip_bomb_is_refused_after_the_cap(tmp_path: Path):
    bomb = tmp_path / "bomb.jsonl.gz"
    try:
        with gzip.open(bomb, "wb", compresslevel=1) as out:
            chunk = b"0" * (1024 * 1024)
            for _ in range(100):
                out.write(chunk)
        data = bomb.read_bytes()
        assert len(data) < 1024 * 1024  # a small upload...
        with pytest.raises(PayloadTooLarge, match="after gzip decompression"):
            parse_transcript(data)  # ...that would be 100 MB once inflated
    finally:
        bomb.unlink(missing_ok=True)

"""Whatever bytes arrive, parse_transcript returns a transcript with honest stats or a clear error."""

from __future__ import annotations

import gzip
import io
import json
import os

import pytest
import zstandard
from cairn.domain.errors import InvalidInput, PayloadTooLarge
from cairn.transcripts import Role, detect_agent, normalise_agent, parse_transcript

pytestmark = pytest.mark.unit


def claude_line(n: int, content: str = "hello") -> dict:
    return {
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "isSidechain": False,
        "sessionId": "s-1",
        "version": "2.0.28",
        "cwd": "/w",
        "type": "user",
        "uuid": f"u{n}",
        "message": {"role": "user", "content": f"{content} {n}"},
        "timestamp": "2025-10-01T10:00:00Z",
    }


def jsonl(*objects: dict) -> bytes:
    return b"".join(json.dumps(obj).encode() + b"\n" for obj in objects)


def test_a_truncated_last_line_is_reported_and_everything_before_it_parsed():
    data = jsonl(claude_line(1), claude_line(2)) + json.dumps(claude_line(3)).encode()[:40]

    parsed = parse_transcript(data)

    assert [e.text for e in parsed.events] == ["hello 1", "hello 2"]
    assert parsed.stats.truncated_tail
    assert parsed.stats.malformed_lines == 1


def test_invalid_utf8_is_replaced_and_flagged_not_fatal():
    data = jsonl(claude_line(1)).replace(b"hello", b"hel\xff\xfelo")

    parsed = parse_transcript(data)

    assert parsed.events[0].text == "hel\ufffd\ufffdlo 1"
    assert parsed.stats.invalid_utf8


def test_malformed_and_non_object_lines_in_the_middle_are_counted_and_skipped():
    data = jsonl(claude_line(1)) + b"{not json\n[1, 2]\n\n   \n" + jsonl(claude_line(2))

    parsed = parse_transcript(data)

    assert len(parsed.events) == 2
    assert parsed.stats.malformed_lines == 2
    assert not parsed.stats.truncated_tail
    assert parsed.stats.lines == 4  # blank lines are not counted


def test_an_empty_file_is_an_empty_transcript():
    for data in (b"", b"\n\n  \n"):
        parsed = parse_transcript(data)
        assert parsed.events == ()
        assert parsed.stats.malformed_lines == 0


def test_an_empty_file_with_a_known_agent_keeps_the_agent():
    assert parse_transcript(b"", agent="codex").agent == "codex"


def test_binary_garbage_is_invalid_input_with_a_clear_message():
    garbage = os.urandom(4096).replace(b"\x1f\x8b", b"xx").replace(b"\x28\xb5", b"yy")

    with pytest.raises(InvalidInput, match="not a transcript"):
        parse_transcript(garbage)
    with pytest.raises(InvalidInput, match="not a transcript"):
        parse_transcript(garbage, agent="claude-code")


def test_plain_text_is_invalid_input():
    with pytest.raises(InvalidInput):
        parse_transcript(b"Hello, this is a README.\nNothing to see here.\n")


def test_json_lines_of_an_unknown_format_are_invalid_input_even_when_an_agent_is_given():
    data = jsonl({"event": "click", "x": 1}, {"event": "scroll", "y": 2})

    with pytest.raises(
        InvalidInput, match="not in Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI or Cursor format"
    ):
        parse_transcript(data)
    # naming an agent does not turn unknown lines into an empty session "learned +0"
    with pytest.raises(InvalidInput, match="not a Claude Code transcript: none of its 2 JSON lines"):
        parse_transcript(data, agent="claude")


def test_an_unknown_future_version_still_parses_what_it_recognises():
    line = claude_line(1) | {"version": "9.9.9", "brandNewField": {"x": 1}}

    parsed = parse_transcript(jsonl(line))

    assert parsed.version == "9.9.9"
    assert parsed.by_role(Role.USER)[0].text == "hello 1"


def test_gzip_and_zstd_inputs_are_decompressed_transparently():
    data = jsonl(claude_line(1), claude_line(2))
    expected = parse_transcript(data).events

    assert parse_transcript(gzip.compress(data)).events == expected
    assert parse_transcript(zstandard.ZstdCompressor().compress(data)).events == expected
    assert parse_transcript(io.BytesIO(gzip.compress(data))).events == expected


def test_a_gzip_stream_cut_off_mid_way_keeps_what_was_recovered_and_says_so():
    data = jsonl(*(claude_line(n, "x" * 50 + os.urandom(20).hex()) for n in range(1, 400)))
    cut = gzip.compress(data)[: len(gzip.compress(data)) // 2]

    parsed = parse_transcript(cut)

    assert 0 < len(parsed.events) < 399
    assert parsed.stats.truncated_tail


def test_input_over_the_cap_is_refused_as_payload_too_large():
    data = jsonl(*(claude_line(n) for n in range(1, 200)))

    with pytest.raises(PayloadTooLarge, match="larger than"):
        parse_transcript(data, max_bytes=1024)
    with pytest.raises(PayloadTooLarge):
        parse_transcript(gzip.compress(data), max_bytes=1024)
    with pytest.raises(PayloadTooLarge):
        parse_transcript(zstandard.ZstdCompressor().compress(data), max_bytes=1024)


def test_agent_names_from_hooks_are_normalised():
    assert normalise_agent("Claude") == "claude-code"
    assert normalise_agent("claude_code") == "claude-code"
    assert normalise_agent("codex-cli") == "codex"
    assert normalise_agent("cursor") == "cursor"  # Cursor has a parser (its documented shape)
    assert normalise_agent("windsurf") is None


def test_detection_uses_content_first_and_the_rollout_file_name_as_a_hint():
    codex_line = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}
    assert detect_agent(iter([codex_line])) == "codex"
    assert detect_agent(iter([claude_line(1)])) == "claude-code"
    assert detect_agent(iter([]), "rollout-2026-02-23T12-40-23-abc.jsonl.zst") == "codex"
    assert detect_agent(iter([{"foo": 1}])) is None

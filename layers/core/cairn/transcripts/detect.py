"""One entry point for any uploaded transcript: decompress, detect the agent, parse, filter noise.

`parse_transcript` never crashes on bad input. It returns a `ParsedTranscript` whose stats say what
was skipped (truncated last line, invalid UTF-8, unknown line types, malformed lines), raises
`InvalidInput` only when nothing in the input is a JSON-lines transcript at all, and
`PayloadTooLarge` when it would exceed `MAX_TRANSCRIPT_BYTES` once decompressed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

from cairn.domain.errors import InvalidInput
from cairn.transcripts.claude_code import parse_claude_code
from cairn.transcripts.codex import parse_codex
from cairn.transcripts.lines import MAX_TRANSCRIPT_BYTES, LineStats, decompress, iter_json_objects
from cairn.transcripts.model import ParsedTranscript, ParseStats

CLAUDE_CODE = "claude-code"
CODEX = "codex"

_AGENT_ALIASES = {
    "claude-code": CLAUDE_CODE,
    "claude_code": CLAUDE_CODE,
    "claude": CLAUDE_CODE,
    "claudecode": CLAUDE_CODE,
    "codex": CODEX,
    "codex-cli": CODEX,
    "codex_cli": CODEX,
    "openai-codex": CODEX,
}
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "progress", "queue-operation"}
)
_SNIFF_OBJECTS = 20
_SNIFF_LINES = 200


def normalise_agent(agent: str | None) -> str | None:
    """Map the names hooks and users pass ("claude", "codex-cli"...) to a parser name; None if unknown."""
    if agent is None:
        return None
    return _AGENT_ALIASES.get(agent.strip().lower())


def detect_agent(objects: Iterator[Mapping[str, Any]], filename: str | None = None) -> str | None:
    """Guess the agent from the first JSON objects of a transcript (and its file name as a hint)."""
    name = (filename or "").rsplit("/", 1)[-1]
    votes = {CLAUDE_CODE: 0, CODEX: 0}
    if name.startswith("rollout-"):
        votes[CODEX] += 2
    for obj in objects:
        kind = obj.get("type")
        if "payload" in obj and kind in _CODEX_TYPES:
            votes[CODEX] += 3
        elif "parentUuid" in obj or "sessionId" in obj or "leafUuid" in obj:
            votes[CLAUDE_CODE] += 3
        elif kind in _CLAUDE_TYPES and "message" in obj:
            votes[CLAUDE_CODE] += 1
        elif "instructions" in obj and "id" in obj:  # legacy Codex header
            votes[CODEX] += 2
        elif (
            kind in ("message", "function_call", "function_call_output", "reasoning") and "payload" not in obj
        ):
            votes[CODEX] += 1
    best = max(votes, key=lambda agent: votes[agent])
    return best if votes[best] > 0 else None


def _sniff(data: bytes) -> Iterator[Mapping[str, Any]]:
    stats = LineStats()
    for count, (_, obj) in enumerate(iter_json_objects(data, stats)):
        if count >= _SNIFF_OBJECTS or stats.lines > _SNIFF_LINES:
            return
        yield obj


def parse_transcript(
    data: bytes | bytearray | memoryview | BinaryIO,
    agent: str | None = None,
    filename: str | None = None,
    *,
    max_bytes: int = MAX_TRANSCRIPT_BYTES,
) -> ParsedTranscript:
    """Parse a Claude Code or Codex transcript (plain, gzip or zstd; bytes or a binary stream).

    `agent` forces a parser ("claude-code", "codex", or an alias); otherwise it is detected from the
    content, with `filename` as a hint.
    """
    decoded = decompress(data, limit=max_bytes)
    chosen = normalise_agent(agent)
    if chosen is None:
        chosen = detect_agent(_sniff(decoded.data), filename)
    stats = LineStats()
    records = iter_json_objects(decoded.data, stats)
    if chosen is None:
        # nothing recognisable in the first objects: read the rest to tell "empty" from "garbage"
        for _ in records:
            pass
        if stats.objects == 0 and stats.lines == 0:
            return _empty(agent or "unknown", stats)
        if stats.objects == 0:
            raise InvalidInput(
                "not a transcript: no line is a JSON object (expected Claude Code or Codex JSONL)",
                lines=stats.lines,
                compression=decoded.compression,
            )
        raise InvalidInput(
            "not a recognised transcript: JSON lines, but neither Claude Code nor Codex format",
            lines=stats.lines,
        )
    parser = parse_codex if chosen == CODEX else parse_claude_code
    parsed = parser(records, stats, damaged=decoded.damaged)
    if stats.lines and stats.objects == 0:
        raise InvalidInput(
            "not a transcript: no line is a JSON object",
            lines=stats.lines,
            compression=decoded.compression,
        )
    return parsed


def _empty(agent: str, stats: LineStats) -> ParsedTranscript:
    return ParsedTranscript(agent=agent, session_id=None, events=(), stats=ParseStats(lines=stats.lines))

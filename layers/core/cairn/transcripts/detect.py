"""One entry point for any uploaded transcript: decompress, detect the agent, parse, filter noise.

`parse_transcript` never crashes on bad input and never guesses silently. It returns a
`ParsedTranscript` whose stats say what was skipped (truncated last line, invalid UTF-8, unknown line
types, malformed lines). It raises `InvalidInput`, with a reason a person can act on, when nothing in
the input is a transcript, when the content is in another agent's format than the one the session
claims, or when not one line was understood (so a session fails instead of being "learned +0"); and
`PayloadTooLarge` when it would exceed `MAX_TRANSCRIPT_BYTES` once decompressed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, BinaryIO

from cairn.domain.errors import InvalidInput
from cairn.project_files import LINE_TYPE, ProjectFile, from_record, newest
from cairn.transcripts.base import record_type
from cairn.transcripts.claude_code import parse_claude_code
from cairn.transcripts.codex import parse_codex
from cairn.transcripts.copilot_cli import is_copilot_record, parse_copilot_cli
from cairn.transcripts.cursor import is_cursor_record, parse_cursor
from cairn.transcripts.gemini_cli import parse_gemini_cli
from cairn.transcripts.lines import (
    MAX_TRANSCRIPT_BYTES,
    Document,
    LineStats,
    decompress,
    iter_json_objects,
    read_document,
)
from cairn.transcripts.model import ParsedTranscript, ParseStats
from cairn.transcripts.opencode import is_opencode_export, is_opencode_record, parse_opencode

CLAUDE_CODE = "claude-code"
CODEX = "codex"
GEMINI_CLI = "gemini-cli"
OPENCODE = "opencode"
COPILOT_CLI = "copilot-cli"
CURSOR = "cursor"

_PARSERS = {
    CLAUDE_CODE: parse_claude_code,
    CODEX: parse_codex,
    GEMINI_CLI: parse_gemini_cli,
    OPENCODE: parse_opencode,
    COPILOT_CLI: parse_copilot_cli,
    CURSOR: parse_cursor,
}
#: every agent whose transcripts Cairn reads, by the name sessions carry
PARSED_AGENTS = tuple(_PARSERS)
_LABELS = {
    CLAUDE_CODE: "Claude Code",
    CODEX: "Codex",
    GEMINI_CLI: "Gemini CLI",
    OPENCODE: "OpenCode",
    COPILOT_CLI: "Copilot CLI",
    CURSOR: "Cursor",
}
KNOWN_FORMATS = "Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI or Cursor"

_AGENT_ALIASES = {
    "claude-code": CLAUDE_CODE,
    "claude_code": CLAUDE_CODE,
    "claude": CLAUDE_CODE,
    "claudecode": CLAUDE_CODE,
    "codex": CODEX,
    "codex-cli": CODEX,
    "codex_cli": CODEX,
    "openai-codex": CODEX,
    "gemini-cli": GEMINI_CLI,
    "gemini_cli": GEMINI_CLI,
    "gemini": GEMINI_CLI,
    "opencode": OPENCODE,
    "open-code": OPENCODE,
    "copilot-cli": COPILOT_CLI,
    "copilot_cli": COPILOT_CLI,
    "copilot": COPILOT_CLI,
    "github-copilot": COPILOT_CLI,
    "github-copilot-cli": COPILOT_CLI,
    "cursor": CURSOR,
    "cursor-agent": CURSOR,
}
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "progress", "queue-operation"}
)
_GEMINI_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_SNIFF_OBJECTS = 20
_SNIFF_LINES = 200


def normalise_agent(agent: str | None) -> str | None:
    """Map the names hooks and users pass ("claude", "codex-cli"...) to a parser name; None if unknown."""
    if agent is None:
        return None
    return _AGENT_ALIASES.get(agent.strip().lower())


def _vote(obj: Mapping[str, Any], votes: dict[str, int]) -> None:
    kind = record_type(obj)
    if is_opencode_record(obj) or is_opencode_export(obj):
        # Cairn's OpenCode plugin's lines ({"info", "parts"} per message); `opencode export` on one line
        votes[OPENCODE] += 3
    elif is_copilot_record(obj):
        votes[COPILOT_CLI] += 3  # {type: "session.start", data, id, parentId}: dotted types, no other agent
    elif is_cursor_record(obj):
        votes[CURSOR] += 2  # {role, message} with no `type`: Cursor's agent transcript (docs only)
    elif "projectHash" in obj or "$set" in obj or "$rewindTo" in obj:
        votes[GEMINI_CLI] += 3  # Gemini CLI's metadata and update records; no other agent writes these
    elif "payload" in obj and kind in _CODEX_TYPES:
        votes[CODEX] += 3
    elif "parentUuid" in obj or "leafUuid" in obj or ("sessionId" in obj and "uuid" in obj):
        votes[CLAUDE_CODE] += 3
    elif kind == "gemini" or (kind in _GEMINI_MESSAGE_TYPES and "content" in obj and "message" not in obj):
        votes[GEMINI_CLI] += 1
    elif kind in _CLAUDE_TYPES and "message" in obj:
        votes[CLAUDE_CODE] += 1
    elif "instructions" in obj and "id" in obj:  # legacy Codex header
        votes[CODEX] += 2
    elif kind in ("message", "function_call", "function_call_output", "reasoning") and "payload" not in obj:
        votes[CODEX] += 1


def format_votes(objects: Iterator[Mapping[str, Any]], filename: str | None = None) -> dict[str, int]:
    """How strongly the first JSON objects (and the file name) point at each agent's format."""
    name = (filename or "").rsplit("/", 1)[-1]
    votes = dict.fromkeys(_PARSERS, 0)
    if name.startswith("rollout-"):
        votes[CODEX] += 2
    for obj in objects:
        _vote(obj, votes)
    return votes


def detect_agent(objects: Iterator[Mapping[str, Any]], filename: str | None = None) -> str | None:
    """Guess the agent from the first JSON objects of a transcript (and its file name as a hint)."""
    votes = format_votes(objects, filename)
    best = max(votes, key=lambda agent: votes[agent])
    return best if votes[best] > 0 else None


def _sniff(data: bytes) -> Iterator[Mapping[str, Any]]:
    stats = LineStats()
    for count, (_, obj) in enumerate(iter_json_objects(data, stats)):
        if count >= _SNIFF_OBJECTS or stats.lines > _SNIFF_LINES:
            return
        yield obj


def _document_agent(doc: Document) -> str | None:
    """Which agent writes a session as this one JSON document: a pre-JSONL Gemini CLI
    ConversationRecord, or what `opencode export` prints."""
    obj = doc.obj
    if isinstance(obj.get("sessionId"), str) and isinstance(obj.get("messages"), list):
        return GEMINI_CLI
    if is_opencode_export(obj):
        return OPENCODE
    return None


def _document_records(doc: Document, agent: str) -> list[tuple[int, dict[str, Any]]]:
    """The records a document's parser is fed. Gemini CLI's parser reads the ConversationRecord whole;
    an OpenCode export is its session, then each message at the line it starts on, as JSON lines are."""
    if agent == GEMINI_CLI:
        return [(1, doc.obj)]
    head = {k: v for k, v in doc.obj.items() if k != "messages"} | {"messages": []}
    messages = zip(doc.item_lines, doc.obj["messages"], strict=True)
    return [(1, head), *((n, m) for n, m in messages if isinstance(m, dict))]


def parse_transcript(
    data: bytes | bytearray | memoryview | BinaryIO,
    agent: str | None = None,
    filename: str | None = None,
    *,
    max_bytes: int = MAX_TRANSCRIPT_BYTES,
) -> ParsedTranscript:
    """Parse a transcript of any agent in KNOWN_FORMATS (plain, gzip or zstd; bytes or a stream).

    `agent` is the agent the session says it came from ("claude-code", "gemini-cli", or an alias). Its
    parser is used when the content agrees; content in another agent's format is refused, never read
    with the wrong parser. An agent with no parser of its own (cursor, generic...) or none at all
    means: detect from the content, with `filename` as a hint.
    """
    decoded = decompress(data, limit=max_bytes)
    claimed = normalise_agent(agent)
    document = read_document(decoded.data)
    if document is not None:
        if (of := _document_agent(document)) is None:
            raise InvalidInput(
                "not a recognised transcript: one JSON document, but neither a Gemini CLI session nor an "
                f"OpenCode export (expected {KNOWN_FORMATS})",
                lines=document.lines,
            )
        votes = dict.fromkeys(_PARSERS, 0) | {of: 3}
    else:
        votes = format_votes(_sniff(decoded.data), filename)
    detected = max(votes, key=lambda a: votes[a]) if any(votes.values()) else None
    if claimed and detected and votes[claimed] == 0:
        raise InvalidInput(
            f"transcript is in {_LABELS[detected]} format but the session says it came from "
            f"{_LABELS[claimed]}; upload it as {detected}",
            agent=claimed,
            detected=detected,
        )
    chosen = claimed or detected
    stats = LineStats()
    if document is not None:
        records = _document_records(document, chosen)
        stats.lines, stats.objects = document.lines, len(records)
        parsed = _checked(_PARSERS[chosen](records, stats, damaged=decoded.damaged), stats)
        # after the document only project-file lines count; anything else there is not the session's
        after = iter_json_objects(document.rest, LineStats())
        files = [f for n, record in after if (f := from_record(n + document.rest_line, record)) is not None]
        return replace(parsed, project_files=newest(files)) if files else parsed
    project_files: list[ProjectFile] = []
    records = _set_aside_project_files(iter_json_objects(decoded.data, stats), project_files)
    if chosen is None:
        # nothing recognisable in the first objects: read the rest to tell "empty" from "garbage"
        for _ in records:
            pass
        if stats.objects == 0 and stats.lines == 0:
            return _empty(agent or "unknown", stats)
        if stats.objects == 0:
            raise InvalidInput(
                f"not a transcript: no line is a JSON object (expected {KNOWN_FORMATS} JSONL)",
                lines=stats.lines,
                compression=decoded.compression,
            )
        raise InvalidInput(
            f"not a recognised transcript: JSON lines, but not in {KNOWN_FORMATS} format"
            + (f" (the session says {agent!r}, which Cairn has no transcript parser for)" if agent else ""),
            lines=stats.lines,
        )
    parsed = _PARSERS[chosen](records, stats, damaged=decoded.damaged)
    if stats.lines and stats.objects == 0:
        raise InvalidInput(
            "not a transcript: no line is a JSON object",
            lines=stats.lines,
            compression=decoded.compression,
        )
    parsed = _checked(parsed, stats)
    return replace(parsed, project_files=newest(project_files)) if project_files else parsed


def _set_aside_project_files(
    records: Iterable[tuple[int, dict]], into: list[ProjectFile]
) -> Iterator[tuple[int, dict]]:
    """The agent's records; the repository files the capture hook appended go to `into` instead."""
    for line_no, record in records:
        if record.get("type") != LINE_TYPE:
            yield line_no, record
        elif (found := from_record(line_no, record)) is not None:
            into.append(found)


def _checked(parsed: ParsedTranscript, stats: LineStats) -> ParsedTranscript:
    """Refuse a parse that understood not one line: that is the wrong format, not an empty session."""
    if stats.objects and parsed.stats.parsed == 0:
        unknown = ", ".join(sorted(parsed.stats.skipped_unknown)[:5]) or "none"
        raise InvalidInput(
            f"not a {_LABELS.get(parsed.agent, parsed.agent)} transcript: none of its {stats.objects} "
            f"JSON lines is in that format (line types: {unknown})",
            agent=parsed.agent,
            lines=stats.lines,
        )
    return parsed


def _empty(agent: str, stats: LineStats) -> ParsedTranscript:
    return ParsedTranscript(agent=agent, session_id=None, events=(), stats=ParseStats(lines=stats.lines))

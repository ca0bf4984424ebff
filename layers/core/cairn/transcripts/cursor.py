"""Cursor agent transcripts (`~/.cursor/projects/<slug>/agent-transcripts/<id>[/<id>].jsonl`) into events.

CHECKED AGAINST DOCUMENTATION ONLY: no Cursor build was run here (its `agent` CLI installs from cursor.com,
not a package registry, and needs a Cursor account). The shape below is what two independent public
integrations describe from files a real `agent` wrote (Entire CLI's Cursor agent notes, 2026.02; a
Cursor adapter's transcript reader, 2026.10):
- one line per message: `{"role": "user"|"assistant", "message": {"content": [blocks]}}`, blocks as in
  Claude Code: `{"type": "text", "text"}` and `{"type": "tool_use", "name", "input"}` (no ids);
- the typed prompt is wrapped as `<user_query>...</user_query>`, sometimes after a `<timestamp>` or other
  context tags in the same text;
- `{"type": "turn_ended", "status": "success"|"error"|"aborted", "error"?}` after a turn;
- `{"type": "metadata", "metadata": {...}}`, sometimes first.
There are no timestamps, no session id or working directory, and no tool results in the file: a call is
kept without an outcome. Tool names are Cursor's (`Shell` {command}, `Write`/`StrReplace` {path}, `Read`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cairn.transcripts.base import Collector, record_type
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent

AGENT = "cursor"
_ROLES = frozenset({"user", "assistant"})
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*(?:</user_query>|$)", re.S)


def is_cursor_record(obj: Mapping[str, Any]) -> bool:
    """A message line (`role` + `message.content`, and none of Claude Code's `type`/ids) or a turn end."""
    if obj.get("type") == "turn_ended" and "status" in obj:
        return True
    message, role = obj.get("message"), obj.get("role")
    return (
        isinstance(role, str)
        and role in _ROLES
        and "type" not in obj
        and isinstance(message, Mapping)
        and isinstance(message.get("content"), list | str)
    )


def parse_cursor(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of a Cursor agent transcript."""
    out = Collector(AGENT)
    for line_no, record in records:
        kind = record_type(record)
        if is_cursor_record(record) and kind is None:
            out.parsed += 1
            _message(out, line_no, record["role"], record["message"]["content"])
        elif kind == "turn_ended":
            out.parsed += 1
            if record.get("status") == "error":
                error = record.get("error")
                text = error if isinstance(error, str) and error else "the turn ended with an error"
                _add(out, line_no, Role.SYSTEM, text=text, is_error=True)
            else:
                out.ignored[f"turn_ended:{record.get('status')}"] += 1
        elif kind == "metadata":
            out.parsed += 1
            out.ignored["metadata"] += 1
        else:
            out.skipped_unknown[str(kind) if kind is not None else "<no type>"] += 1
    return out.finish(lines, damaged=damaged)


def _add(out: Collector, line_no: int, role: Role, **fields: Any) -> None:
    out.add(TranscriptEvent(seq=len(out.events), line_no=line_no, role=role, **fields))


def _message(out: Collector, line_no: int, role: str, content: object) -> None:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts: list[str] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use" and role == "assistant":
            if texts:
                _add(out, line_no, Role.ASSISTANT, text="\n".join(texts).strip())
                texts = []
            args = block.get("input")
            _add(
                out,
                line_no,
                Role.TOOL_CALL,
                tool_name=str(block.get("name") or "tool"),
                tool_input=args if isinstance(args, Mapping | str) else None,
            )
        elif kind in ("thinking", "redacted_thinking", "reasoning"):
            out.noise["reasoning"] += 1
    text = "\n".join(texts).strip()
    if role == "user":
        queries = [q.strip() for q in _QUERY.findall(text)]
        _add(out, line_no, Role.USER, text="\n\n".join(q for q in queries if q) if queries else text)
    elif text:
        _add(out, line_no, Role.ASSISTANT, text=text)

"""OpenCode sessions, as Cairn's OpenCode plugin writes them or `opencode export` prints them, into events.

OpenCode keeps sessions in its own store; the plugin (`cairn install-hooks --agent opencode`) exports a
session through OpenCode's API when it goes idle, appending one JSON line per finished message, exactly as
the API returns it: `{"info": {id, sessionID, role, time, modelID, path: {cwd, root}, summary?, error?},
"parts": [...]}`, after a first `{"type": "session", "id", "directory"}` line. A message is written once,
whole; a later export only appends messages that were not finished before.

`opencode export <session>` writes the same messages as ONE JSON document, pretty-printed:
`{"info": {id, directory, version, title, time}, "messages": [{"info", "parts"}, ...]}`. Detection reads
it (`lines.read_document`) and feeds the session, then each message at the line it starts on; on one
line, the whole document arrives as one record and its messages share that line.

Mapping onto the event model, as the other agents': a user message's text parts -> USER (parts OpenCode
marks `synthetic`, e.g. file contents it attached, are not what the person typed), assistant text ->
ASSISTANT, each `tool` part -> TOOL_CALL (`bash` has `{command, description}`; edits are `edit`/`write`)
followed by its TOOL_RESULT (`state.output`, or `state.error` when it failed), a compaction summary
message (`summary: true`) -> SUMMARY, an assistant error -> SYSTEM error. A reasoning part's text is
the model's visible reasoning -> THINKING (a low-trust source, as Claude Code's thinking); one with no
text (encrypted only) is dropped and counted. Step markers, snapshots and patches (the files a step
changed, already in its edit calls) say nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from cairn.transcripts.base import Collector, record_type
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent

AGENT = "opencode"
_SILENT_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction"})


def parse_opencode(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of an exported OpenCode session."""
    out = Collector(AGENT)
    for line_no, record in records:
        info = record.get("info")
        if record.get("type") == "session" and isinstance(record.get("id"), str):
            out.parsed += 1
            out.first("session_id", record["id"])
            out.first("cwd", record.get("directory"))
        elif is_opencode_export(record):
            out.parsed += 1
            _session(out, record["info"])
            for message in record["messages"]:
                if is_opencode_record(message):
                    _message(out, line_no, message["info"], message["parts"])
                else:
                    out.skipped_unknown["<not a message>"] += 1
        elif isinstance(info, Mapping) and isinstance(record.get("parts"), list):
            out.parsed += 1
            _message(out, line_no, info, record["parts"])
        else:
            kind = record_type(record)
            out.skipped_unknown[str(kind) if kind is not None else "<no type>"] += 1
    return out.finish(lines, damaged=damaged)


def is_opencode_record(obj: Mapping[str, Any]) -> bool:
    """What format detection looks for: the plugin's session line, or a message record."""
    if obj.get("type") == "session" and "directory" in obj and "id" in obj:
        return True
    info = obj.get("info")
    return isinstance(info, Mapping) and "role" in info and isinstance(obj.get("parts"), list)


def is_opencode_export(obj: Mapping[str, Any]) -> bool:
    """An `opencode export` document: the session's info (no role: it is no message) and its messages."""
    info = obj.get("info")
    return (
        isinstance(info, Mapping)
        and "role" not in info
        and isinstance(info.get("id"), str)
        and isinstance(obj.get("messages"), list)
    )


def _session(out: Collector, info: Mapping[str, Any]) -> None:
    out.first("session_id", info["id"])
    out.first("cwd", info.get("directory"))
    out.first("version", info.get("version"))
    out.first("started_at", _time(info.get("time")))


def _message(out: Collector, line_no: int, info: Mapping[str, Any], parts: list[Any]) -> None:
    out.first("session_id", info.get("sessionID"))
    path = info.get("path")
    if isinstance(path, Mapping):
        out.first("cwd", path.get("cwd"))
    stamp = _time(info.get("time"))
    out.first("started_at", stamp)
    role = info.get("role")

    def add(role: Role, **fields: Any) -> None:
        out.add(TranscriptEvent(seq=len(out.events), line_no=line_no, role=role, timestamp=stamp, **fields))

    if role == "user":
        if text := _typed(parts):
            add(Role.USER, text=_unquoted(text), message_id=info.get("id"))
        else:
            out.ignored["user:no_text"] += 1
        return
    if role != "assistant":
        out.skipped_unknown[f"role:{role}"] += 1
        return
    out.first("model", info.get("modelID"))
    said = Role.SUMMARY if info.get("summary") else Role.ASSISTANT
    for part in parts:
        if isinstance(part, Mapping):
            _part(out, add, part, said, info.get("id"))
    error = info.get("error")
    if isinstance(error, Mapping):
        data = error.get("data")
        message = data.get("message") if isinstance(data, Mapping) else None
        add(Role.SYSTEM, text=str(message or error.get("name") or "error"), is_error=True)


def _part(out: Collector, add, part: Mapping[str, Any], said: Role, message_id: object) -> None:
    """One part of an assistant message: its text (`said`: a reply, or a compaction's summary), a tool
    call, visible reasoning; the rest is counted."""
    kind = record_type(part)
    text = part.get("text") if isinstance(part.get("text"), str) and part["text"].strip() else None
    if kind == "text" and text:
        add(said, text=text, message_id=message_id)
    elif kind == "tool":
        _tool(add, part)
    elif kind == "reasoning" and text:
        add(Role.THINKING, text=text, message_id=message_id)
    elif kind == "reasoning":
        out.noise["reasoning"] += 1  # encrypted only: nothing anyone could read
    elif kind in _SILENT_PARTS or kind == "text":
        out.ignored[f"part:{kind}"] += 1
    else:
        out.skipped_unknown[f"part:{kind}"] += 1


def _typed(parts: list[Any]) -> str:
    """What the person typed: a user message's text parts but those OpenCode added or set aside."""
    return "\n".join(
        p["text"]
        for p in parts
        if isinstance(p, Mapping)
        and p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
        and not p.get("ignored")
    ).strip()


def _tool(add, part: Mapping[str, Any]) -> None:
    state = part.get("state") if isinstance(part.get("state"), Mapping) else {}
    name = str(part.get("tool") or "tool")
    call_id = str(part.get("callID") or part.get("id") or "")
    tool_input = state.get("input")
    add(
        Role.TOOL_CALL,
        tool_name=name,
        tool_input=tool_input if isinstance(tool_input, Mapping | str) else None,
        tool_call_id=call_id,
    )
    status = state.get("status")
    if status == "completed":
        add(Role.TOOL_RESULT, tool_name=name, tool_call_id=call_id, text=str(state.get("output") or ""))
    elif status == "error":
        add(
            Role.TOOL_RESULT,
            tool_name=name,
            tool_call_id=call_id,
            text=str(state.get("error") or ""),
            is_error=True,
        )


def _time(value: object) -> str | None:
    """OpenCode's `time.created` (milliseconds since the epoch) as ISO-8601."""
    created = value.get("created") if isinstance(value, Mapping) else None
    if not isinstance(created, int | float) or created <= 0:
        return None
    return datetime.fromtimestamp(created / 1000, UTC).isoformat()


def _unquoted(text: str) -> str:
    """`opencode run "..."` stores the message in quotes; what the person typed is inside them."""
    if len(text) > 1 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        return text[1:-1].strip()
    return text

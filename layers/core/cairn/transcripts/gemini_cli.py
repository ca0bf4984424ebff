"""Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`) into normalised events.

Since 0.38 (April 2026) Gemini CLI appends one JSON record per line (`chatRecordingService.ts`):
- a metadata record `{sessionId, projectHash, startTime, lastUpdated, kind}` first;
- message records `{id, timestamp, type: user|gemini|info|error|warning, content, displayContent?}`;
  a `gemini` message adds `toolCalls: [{id, name, args, result, status, resultDisplay...}]`,
  `thoughts`, `tokens` and `model`. A message is appended again, whole, each time it changes (its
  tokens arrive, its tool calls finish): the last copy wins and keeps the place of the first;
- `{"$set": {...}}` metadata updates; a `$set` of `messages` replaces the conversation (the startup
  context, a history sync after /compress); `{"$rewindTo": id}` drops that message and what follows.
Older versions wrote the whole `ConversationRecord` (metadata plus `messages`) as one JSON document;
`detect` hands it here as a single record.

Mapping onto the event model, as the other agents': user text -> USER (the `<session_context>` and
`<hook_context>` blocks Gemini injects are cut by the noise filter), gemini text -> ASSISTANT, each tool
call -> TOOL_CALL (`run_shell_command` args {command, description}; edits are `replace` / `write_file`)
followed by its TOOL_RESULT, error messages -> SYSTEM errors. A user message holding only
`functionResponse` parts repeats the tool results already in `toolCalls` and is skipped. Thoughts are
private reasoning, dropped and counted like Claude Code's thinking blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cairn.transcripts.base import Collector, feed_all, record_type
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent

AGENT = "gemini-cli"

_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_FAILED_STATUS = frozenset({"error", "cancelled"})
_EXIT_CODE = re.compile(r"^Exit Code:\s*(-?\d+)\s*$", re.M)
_PGID = re.compile(r"^(?:Process Group PGID|Background PIDs):.*$\n?", re.M)
_UNTRUSTED = re.compile(r"^\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*$", re.S)
_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*-\s*(\S[^\n]*)")


def parse_gemini_cli(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of a Gemini CLI session file."""
    return feed_all(_Parser(), records, lines, damaged)


class _Parser:
    def __init__(self) -> None:
        self.out = Collector(AGENT)
        # message id -> (line of its latest copy, latest copy); dict order is first appearance
        self.messages: dict[str, tuple[int, Mapping[str, Any]]] = {}
        self.summary: tuple[int, str] | None = None

    def feed(self, line_no: int, record: dict[str, Any]) -> None:
        if isinstance(record.get("$rewindTo"), str):
            self.out.parsed += 1
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("$set"), Mapping):
            self.out.parsed += 1
            self._update(line_no, record["$set"])
        elif isinstance(record.get("id"), str) and record_type(record) in _MESSAGE_TYPES:
            self.out.parsed += 1
            self._message(line_no, record)
        elif isinstance(record.get("sessionId"), str):
            # the opening metadata record (or a whole legacy ConversationRecord)
            self.out.parsed += 1
            self._update(line_no, record)
            self.out.first("session_id", record.get("sessionId"))
            self.out.first("started_at", record.get("startTime"))
        else:
            kind = record_type(record)
            self.out.skipped_unknown[str(kind) if kind is not None else "<no type>"] += 1

    def _message(self, line_no: int, message: Mapping[str, Any]) -> None:
        self.messages[message["id"]] = (line_no, message)

    def _rewind(self, message_id: str) -> None:
        ids = list(self.messages)
        cut = ids.index(message_id) if message_id in self.messages else 0
        for dropped in ids[cut:]:
            del self.messages[dropped]
        self.out.noise["rewound"] += len(ids) - cut

    def _update(self, line_no: int, fields: Mapping[str, Any]) -> None:
        messages = fields.get("messages")
        if isinstance(messages, list):
            if self.messages:
                self.out.ignored["replaced_history"] += len(self.messages)
            self.messages.clear()
            for message in messages:
                if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                    self._message(line_no, message)
        summary = fields.get("summary")
        if isinstance(summary, str) and summary.strip():
            self.summary = (line_no, summary)
        if not isinstance(messages, list) and "summary" not in fields:
            self.out.ignored["metadata"] += 1

    # -- events ---------------------------------------------------------------------------------
    def finish(self, lines: LineStats, *, damaged: bool) -> ParsedTranscript:
        for line_no, message in self.messages.values():
            self._events_of(line_no, message)
        if self.summary:
            self._add(self.summary[0], Role.SUMMARY, None, text=self.summary[1])
        return self.out.finish(lines, damaged=damaged)

    def _add(self, line_no: int, role: Role, timestamp: object, **fields: Any) -> None:
        self.out.add(
            TranscriptEvent(
                seq=len(self.out.events),
                line_no=line_no,
                role=role,
                timestamp=timestamp if isinstance(timestamp, str) else None,
                **fields,
            )
        )

    def _events_of(self, line_no: int, message: Mapping[str, Any]) -> None:
        kind = record_type(message)
        timestamp = message.get("timestamp")
        if kind == "user":
            shown = _text_of(message.get("displayContent"))
            text = shown or _text_of(message.get("content"))
            if not text and _only_tool_responses(message.get("content")):
                self.out.ignored["tool_response_echo"] += 1
                return
            if cwd := _WORKSPACE.search(text):
                self.out.first("cwd", cwd.group(1).strip())
            self._add(line_no, Role.USER, timestamp, text=text)
        elif kind == "gemini":
            self.out.first("model", message.get("model"))
            thoughts = message.get("thoughts")
            if isinstance(thoughts, list) and thoughts:
                self.out.noise["reasoning"] += len(thoughts)
            text = _text_of(message.get("content"))
            if text:
                self._add(line_no, Role.ASSISTANT, timestamp, text=text, message_id=message.get("id"))
            for call in message.get("toolCalls") or ():
                if isinstance(call, Mapping):
                    self._tool_call(line_no, call, timestamp)
        elif kind == "error":
            self._add(line_no, Role.SYSTEM, timestamp, text=_text_of(message.get("content")), is_error=True)
        else:  # info / warning: the CLI's own notices
            self.out.ignored[f"message:{kind}"] += 1

    def _tool_call(self, line_no: int, call: Mapping[str, Any], fallback_ts: object) -> None:
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        args = call.get("args")
        self._add(
            line_no,
            Role.TOOL_CALL,
            call.get("timestamp") or fallback_ts,
            tool_name=str(call.get("name") or "tool"),
            tool_input=args if isinstance(args, Mapping) else None,
            tool_call_id=call_id,
        )
        status = call.get("status") if isinstance(call.get("status"), str) else None  # a list is not hashable
        result = call.get("result")
        if result is None and status not in _FAILED_STATUS:
            return  # still running when the file was written
        text, failed = _result_text(result, call.get("resultDisplay"))
        self._add(
            line_no,
            Role.TOOL_RESULT,
            call.get("timestamp") or fallback_ts,
            text=text,
            tool_call_id=call_id,
            is_error=failed or status in _FAILED_STATUS,
        )


def _parts(content: object) -> list[object]:
    if isinstance(content, list):
        return content
    return [] if content is None else [content]


def _text_of(content: object) -> str:
    """The text parts of a PartListUnion (a string, a Part, or a list of either)."""
    texts: list[str] = []
    for part in _parts(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
    return "\n".join(t for t in texts if t).strip()


def _only_tool_responses(content: object) -> bool:
    parts = _parts(content)
    return bool(parts) and all(isinstance(p, Mapping) and "functionResponse" in p for p in parts)


def _result_text(result: object, display: object) -> tuple[str, bool]:
    """A tool result's text (unwrapped from Gemini's markers) and whether it says it failed."""
    texts: list[str] = []
    failed = False
    for part in _parts(result):
        if not isinstance(part, Mapping):
            continue
        response = part.get("functionResponse")
        if isinstance(response, Mapping):
            body = response.get("response")
            if isinstance(body, Mapping):
                if body.get("error"):
                    failed = True
                    texts.append(str(body["error"]))
                output = body.get("output")
                if isinstance(output, str):
                    texts.append(output)
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
    text = "\n".join(texts)
    if not text and isinstance(display, str):
        text = display
    text = _unwrap(text)
    code = _EXIT_CODE.search(text)
    return text, failed or bool(code and int(code.group(1)) != 0)


def _unwrap(text: str) -> str:
    """Shell output comes as `<untrusted_context>\\nOutput: ...\\nProcess Group PGID: n\\n</...>`."""
    if match := _UNTRUSTED.match(text):
        text = match.group(1)
    text = _PGID.sub("", text)
    if text.startswith("Output: "):
        text = text[len("Output: ") :]
    return text.strip()

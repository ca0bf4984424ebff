"""GitHub Copilot CLI session logs (`~/.copilot/session-state/<session id>/events.jsonl`) into events.

Every line is `{type, data, id, timestamp, parentId}` (the CLI's own schema ships in its package as
`schemas/session-events.schema.json`; subagent events add a top-level `agentId`):
- `session.start` / `session.resume`: session id, `copilotVersion`, `startTime`, `selectedModel`,
  `context {cwd, gitRoot, branch, headCommit}`; `session.model_change` names the model when chosen later;
- `user.message`: `content` is what the person typed; `transformedContent` is what the model got (the date,
  `<system_reminder>` blocks, hook `additionalContext`), so it is never used;
- `assistant.message`: visible `content`, private `reasoningText` (dropped and counted, as other agents'
  thinking), and `toolRequests [{toolCallId, name, arguments}]`;
- `tool.execution_start` repeats a requested call (used only for a call no message requested) and
  `tool.execution_complete` carries its outcome: `success`, `result.content` (what the model saw) or
  `error.message`; shell output ends `<shellId: n completed with exit code k>`;
- `session.compaction_complete` holds the compaction summary; `session.error` an error worth keeping;
  `session.snapshot_rewind` drops the events it names; `system.message` is the system prompt, and hooks,
  turns, permissions, usage and UI notices have nothing to learn from.

Tool names stay as Copilot writes them: `bash` (args {command, description}), `edit`
(path/old_str/new_str), `create`, `view`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cairn.transcripts.base import Collector, feed_all, record_type
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent

AGENT = "copilot-cli"

# what the CLI writes that holds nothing to learn from (counted as ignored, never as unknown)
_IGNORED_PREFIXES = (
    "hook.",
    "permission.",
    "assistant.turn_",
    "assistant.usage",
    "assistant.intent",
    "assistant.idle",
    "assistant.message_",
    "assistant.reasoning",
    "assistant.streaming_delta",
    "assistant.tool_call_delta",
    "assistant.server_tool_progress",
    "assistant.fusion_",
    "tool.execution_progress",
    "tool.execution_partial_result",
    "tool.shell_output",
    "tool.user_requested",
    "tool_search.",
    "system.",
    "session.",
    "subagent.",
    "skill.",
    "mcp.",
    "mcp_app.",
    "model.",
    "sampling.",
    "elicitation.",
    "external_tool.",
    "exit_plan_mode.",
    "user_input.",
    "human_response.",
    "pending_messages.",
    "command.",
    "commands.",
    "capabilities.",
    "auto_mode_switch.",
    "sandbox.",
    "workflow.",
    "ui.",
    "agent.",
    "session_limits_exhausted.",
)
_SHELL_TRAILER = re.compile(r"\n?<shellId: \S+ completed with exit code (-?\d+)>\s*$")


def is_copilot_record(obj: Mapping[str, Any]) -> bool:
    """A Copilot CLI event: a dotted `type`, a `data` object and the event's own `id`."""
    kind = record_type(obj)
    return (
        kind is not None
        and "." in kind
        and isinstance(obj.get("data"), Mapping)
        and isinstance(obj.get("id"), str)
        and "parentId" in obj
    )


def parse_copilot_cli(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of a Copilot CLI `events.jsonl`."""
    return feed_all(_Parser(), records, lines, damaged)


class _Parser:
    def __init__(self) -> None:
        self.out = Collector(AGENT)
        self.pending: list[tuple[str | None, TranscriptEvent]] = []  # (source record id, event)
        self.requested: set[str] = set()  # tool call ids a message asked for
        self.rewound: set[str] = set()

    def feed(self, line_no: int, record: dict[str, Any]) -> None:
        kind = record_type(record)
        data = record.get("data")
        if kind is None or not isinstance(data, Mapping) or not is_copilot_record(record):
            self.out.skipped_unknown[str(kind) if kind is not None else "<no type>"] += 1
            return
        self.out.parsed += 1
        rid = record.get("id") if isinstance(record.get("id"), str) else None
        ts = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        side = bool(record.get("agentId") or data.get("parentToolCallId"))
        if kind in ("session.start", "session.resume"):
            self._start(data)
        elif kind == "session.model_change":
            self.out.first("model", data.get("newModel"))
        elif kind == "user.message":
            self._add(rid, line_no, Role.USER, ts, side, text=_str(data.get("content")))
        elif kind == "assistant.message":
            self._assistant(rid, line_no, ts, side, data)
        elif kind == "tool.execution_start":
            self._tool_start(rid, line_no, ts, side, data)
        elif kind == "tool.execution_complete":
            self._tool_complete(rid, line_no, ts, side, data)
        elif kind == "session.compaction_complete" and _str(data.get("summaryContent")):
            self._add(rid, line_no, Role.SUMMARY, ts, side, text=_str(data.get("summaryContent")))
        elif kind == "session.error":
            self._add(rid, line_no, Role.SYSTEM, ts, side, text=_str(data.get("message")), is_error=True)
        elif kind == "session.snapshot_rewind":
            ids = data.get("eventIds")
            if isinstance(ids, list):
                self.rewound.update(i for i in ids if isinstance(i, str))
        elif kind.startswith(_IGNORED_PREFIXES):
            self.out.ignored[kind] += 1
        else:
            self.out.parsed -= 1
            self.out.skipped_unknown[kind] += 1

    def _start(self, data: Mapping[str, Any]) -> None:
        self.out.first("session_id", data.get("sessionId"))
        self.out.first("version", data.get("copilotVersion"))
        self.out.first("started_at", data.get("startTime"))
        self.out.first("model", data.get("selectedModel"))
        context = data.get("context")
        if isinstance(context, Mapping):
            self.out.first("cwd", context.get("cwd"))
            self.out.first("git_branch", context.get("branch"))
            self.out.first("git_commit", context.get("headCommit"))
            self.out.first("git_remote", context.get("repository"))

    def _assistant(self, rid: str | None, line_no: int, ts: str | None, side: bool, data: Mapping) -> None:
        self.out.first("model", data.get("model"))
        if _str(data.get("reasoningText")):
            self.out.noise["reasoning"] += 1
        text = _str(data.get("content"))
        if text:
            self._add(
                rid, line_no, Role.ASSISTANT, ts, side, text=text, message_id=_id(data.get("messageId"))
            )
        for request in data.get("toolRequests") or ():
            if not isinstance(request, Mapping):
                continue
            call_id = _id(request.get("toolCallId"))
            if call_id:
                self.requested.add(call_id)
            self._call(rid, line_no, ts, side, request.get("name"), request.get("arguments"), call_id)

    def _tool_start(self, rid: str | None, line_no: int, ts: str | None, side: bool, data: Mapping) -> None:
        call_id = _id(data.get("toolCallId"))
        if call_id and call_id in self.requested:
            self.out.ignored["tool.execution_start"] += 1  # the message's request, told again
            return
        self._call(rid, line_no, ts, side, data.get("toolName"), data.get("arguments"), call_id)

    def _call(self, rid, line_no, ts, side, name: object, args: object, call_id: str | None) -> None:
        self._add(
            rid,
            line_no,
            Role.TOOL_CALL,
            ts,
            side,
            tool_name=str(name or "tool"),
            tool_input=args if isinstance(args, Mapping | str) else None,
            tool_call_id=call_id,
        )

    def _tool_complete(
        self, rid: str | None, line_no: int, ts: str | None, side: bool, data: Mapping
    ) -> None:
        result = data.get("result") if isinstance(data.get("result"), Mapping) else {}
        error = data.get("error") if isinstance(data.get("error"), Mapping) else {}
        text = (
            _str(result.get("content")) or _str(result.get("detailedContent")) or _str(error.get("message"))
        )
        failed = data.get("success") is False or bool(error)
        exit_code: int | None = None
        shell = data.get("shellExecution")
        if isinstance(shell, Mapping) and isinstance(shell.get("exitCode"), int):
            exit_code = shell["exitCode"]
        if trailer := _SHELL_TRAILER.search(text):
            text = text[: trailer.start()].rstrip()
            exit_code = int(trailer.group(1)) if exit_code is None else exit_code
        failed = failed or bool(exit_code)
        self._add(
            rid,
            line_no,
            Role.TOOL_RESULT,
            ts,
            side,
            text=text,
            tool_call_id=_id(data.get("toolCallId")),
            is_error=failed,
        )

    def _add(
        self, rid: str | None, line_no: int, role: Role, ts: str | None, side: bool, **fields: Any
    ) -> None:
        event = TranscriptEvent(
            seq=len(self.pending), line_no=line_no, role=role, timestamp=ts, is_sidechain=side, **fields
        )
        self.pending.append((rid, event))

    def finish(self, lines: LineStats, *, damaged: bool) -> ParsedTranscript:
        for rid, event in self.pending:
            if rid is not None and rid in self.rewound:
                self.out.noise["rewound"] += 1
                continue
            self.out.add(event)
        return self.out.finish(lines, damaged=damaged)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _id(value: object) -> str | None:
    return value if isinstance(value, str) and value else None

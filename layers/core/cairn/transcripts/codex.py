"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]`) into normalised events.

Each line is `{timestamp, type, payload}`:
- `session_meta`: id, cwd, cli_version, git {commit_hash, branch, repository_url}.
- `response_item`: the model-facing history (message, function_call, function_call_output,
  custom_tool_call[_output], local_shell_call, web_search_call, reasoning). This is the source of
  events: it holds every message once.
- `event_msg`: the UI stream. It repeats messages already in `response_item` (agent_message,
  user_message...), so only `user_message` is used, as a signal: Codex records one for each prompt
  a person typed, so a user-role `response_item` NOT followed by one is injected context (AGENTS.md,
  environment context). Error events are kept as they may be unresolved.
- the app and the IDE extension send the person's prompt after the context they attached ("# Files
  mentioned by the user: …", "# Context from my IDE setup: …"), under "## My request for Codex:": the
  person typed what follows it; a plan approved in plan mode comes as "PLEASE IMPLEMENT THIS PLAN:" and
  the agent's plan (`is_plan`).
- `turn_context`: per-turn settings (model, cwd); `compacted`: a compaction summary.
A worker thread the session spawned (its own rollout, whose `session_meta.source` is
`{subagent: {thread_spawn: {parent_thread_id}}}`) arrives as a further part of its parent's session, after
the parent's lines: from its `session_meta` on, its events are sub-agent work (`is_sidechain`), as Claude
Code's sub-agents are; its task prompt is the parent agent's, not something the person typed. A worker
rollout learned on its own (its parent not there) is read as a session like any other.
Rollouts from before the `{type, payload}` wrapper (bare response items after a header line with
`id`/`instructions`) are read too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from cairn.transcripts.base import Collector, feed_all, record_type
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent

AGENT = "codex"

_RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "reasoning",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
    }
)
_IGNORED_EVENTS_WITH_ERRORS = frozenset({"error", "stream_error"})
_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")


def parse_codex(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of a Codex rollout."""
    return feed_all(_Parser(), records, lines, damaged)


class _Parser:
    def __init__(self) -> None:
        self.out = Collector(AGENT)
        self.saw_user_message_event = False
        self.pending_user: list[int] = []  # indexes of user events awaiting their user_message event
        self.unconfirmed_user: set[int] = set()
        self.first_line = True
        self.sidechain = False  # inside a worker thread's part, after the session's own lines
        self.in_header = False  # the session_meta lines a rollout starts with (a fork repeats its ancestors')

    def feed(self, line_no: int, record: dict[str, Any]) -> None:
        first, self.first_line = self.first_line, False
        kind = record_type(record)
        header, self.in_header = self.in_header, kind == "session_meta"
        payload = record.get("payload")
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        if "payload" not in record:
            # legacy rollouts: a bare header, then bare response items
            if first and "id" in record and kind is None:
                self.out.parsed += 1
                self._session_meta(record)
                return
            if kind in _RESPONSE_ITEM_TYPES:
                kind, payload = "response_item", record
            elif "record_type" in record:
                self.out.parsed += 1
                self.out.ignored[f"record_type:{record.get('record_type')}"] += 1
                return
        if not isinstance(payload, Mapping) or not isinstance(kind, str):
            self.out.skipped_unknown[str(kind) if kind is not None else "<no type>"] += 1
            return
        if kind == "response_item":
            self._settle_pending()
            self._response_item(line_no, payload, timestamp)
        elif kind == "event_msg":
            self._event_msg(line_no, payload, timestamp)
        elif kind == "session_meta":
            self.out.parsed += 1
            if not header and self.out.session_id is not None:  # a further part begins
                thread = payload.get("id")
                self.sidechain = thread != self.out.session_id and worker_parent(payload) is not None
            self._session_meta(payload)
        elif kind == "turn_context":
            self.out.parsed += 1
            self.out.first("model", payload.get("model"))
            self.out.first("cwd", payload.get("cwd"))
            self.out.ignored["turn_context"] += 1
        elif kind == "compacted":
            self.out.parsed += 1
            text = payload.get("message")
            self.out.add(
                self._event(line_no, Role.SUMMARY, timestamp, text=text if isinstance(text, str) else "")
            )
        else:
            self.out.skipped_unknown[kind] += 1

    def _session_meta(self, meta: Mapping[str, Any]) -> None:
        # a resumed or forked rollout repeats its ancestors' session_meta; the first one is this session
        self.out.first("session_id", meta.get("id"))
        self.out.first("cwd", meta.get("cwd"))
        self.out.first("version", meta.get("cli_version"))
        self.out.first("started_at", meta.get("timestamp"))
        git = meta.get("git")
        if isinstance(git, Mapping):
            self.out.first("git_remote", git.get("repository_url"))
            self.out.first("git_branch", git.get("branch"))
            self.out.first("git_commit", git.get("commit_hash"))

    def _event(self, line_no: int, role: Role, timestamp: str | None, **fields: Any) -> TranscriptEvent:
        return TranscriptEvent(
            seq=len(self.out.events),
            line_no=line_no,
            role=role,
            timestamp=timestamp,
            is_sidechain=self.sidechain,
            **fields,
        )

    def _response_item(self, line_no: int, item: Mapping[str, Any], timestamp: str | None) -> None:
        itype = item.get("type")
        self.out.parsed += 1
        if itype == "message":
            role = item.get("role")
            text = _message_text(item.get("content"))
            if role == "assistant":
                self.out.add(
                    self._event(
                        line_no, Role.ASSISTANT, timestamp, text=text, message_id=_str(item.get("id"))
                    )
                )
            elif role == "user":
                self.pending_user.append(len(self.out.events))
                typed = _typed(text)
                plan = typed.startswith(_IMPLEMENT_PLAN)
                self.out.add(self._event(line_no, Role.USER, timestamp, text=typed, is_plan=plan))
            else:  # developer / system: the agent's own instructions
                self.out.noise["system_prompt"] += 1
        elif itype in (
            "function_call",
            "custom_tool_call",
            "local_shell_call",
            "web_search_call",
            "tool_search_call",
            "image_generation_call",
        ):
            name = _str(item.get("name")) or {
                "local_shell_call": "shell",
                "web_search_call": "web_search",
            }.get(str(itype), str(itype))
            raw = item.get("arguments", item.get("input", item.get("action")))
            self.out.add(
                self._event(
                    line_no,
                    Role.TOOL_CALL,
                    timestamp,
                    tool_name=name,
                    tool_input=_arguments(raw),
                    tool_call_id=_str(item.get("call_id")),
                )
            )
        elif itype in (
            "function_call_output",
            "custom_tool_call_output",
            "local_shell_call_output",
            "tool_search_output",
        ):
            text, is_error = _output(item.get("output"))
            self.out.add(
                self._event(
                    line_no,
                    Role.TOOL_RESULT,
                    timestamp,
                    text=text,
                    tool_call_id=_str(item.get("call_id")),
                    is_error=is_error,
                )
            )
        elif itype == "reasoning":
            self.out.noise["reasoning"] += 1
        else:
            self.out.parsed -= 1
            self.out.skipped_unknown[f"response_item:{itype}"] += 1

    def _event_msg(self, line_no: int, payload: Mapping[str, Any], timestamp: str | None) -> None:
        etype = record_type(payload)
        self.out.parsed += 1
        if etype == "user_message":
            self.saw_user_message_event = True
            # confirms the user response_item just before it: a person typed that one
            if self.pending_user:
                self.pending_user.pop()
            self._settle_pending()
        elif etype in _IGNORED_EVENTS_WITH_ERRORS:
            message = payload.get("message")
            self.out.add(
                self._event(line_no, Role.SYSTEM, timestamp, text=str(message or etype), is_error=True)
            )
        else:
            self.out.ignored[f"event_msg:{etype}"] += 1

    def _settle_pending(self) -> None:
        self.unconfirmed_user.update(self.pending_user)
        self.pending_user.clear()

    def finish(self, lines: LineStats, *, damaged: bool) -> ParsedTranscript:
        self._settle_pending()
        if self.saw_user_message_event and self.unconfirmed_user:
            # only trusted when the rollout records user_message events at all (older ones do not)
            kept: list[TranscriptEvent] = []
            for index, event in enumerate(self.out.events):
                if index in self.unconfirmed_user:
                    self.out.noise["injected_context"] += 1
                    continue
                kept.append(event)
            self.out.events = kept
        return self.out.finish(lines, damaged=damaged)


def worker_parent(meta: Mapping[str, Any]) -> str | None:
    """The thread that spawned a worker thread (`source: {subagent: {thread_spawn: {parent_thread_id}}}`,
    how codex-rs writes `SessionSource::SubAgent(ThreadSpawn)`); None for a session a person started."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, Mapping) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, Mapping) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, Mapping) else None
    parent = parent or meta.get("parent_thread_id")
    return parent if isinstance(parent, str) and parent else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


# Codex's app and IDE extension send what the person typed after the context they attached (open tabs,
# files mentioned, a selection): "# Context from my IDE setup: … ## My request for Codex:\n<typed>".
_REQUEST = "## My request for Codex:"
# ... and, when the person approves a plan in plan mode, the plan the agent wrote after this line
_IMPLEMENT_PLAN = "PLEASE IMPLEMENT THIS PLAN:"


def _typed(text: str) -> str:
    """What the person typed: after the last request heading when the app put context before it (a
    message of attachments alone keeps its text)."""
    at = text.rfind(_REQUEST)
    typed = text[at + len(_REQUEST) :].strip() if at >= 0 else text
    return typed or text


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def _arguments(raw: object) -> Mapping[str, Any] | str | None:
    """Function-call arguments arrive as a JSON string; keep the object when it parses."""
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        return parsed if isinstance(parsed, Mapping) else raw
    return raw if isinstance(raw, Mapping) else None


def _output(raw: object) -> tuple[str, bool]:
    """Tool output is plain text, a JSON string `{output, metadata: {exit_code}}`, or `{content, success}`."""
    if isinstance(raw, Mapping):
        text = raw.get("content", raw.get("output", ""))
        text = text if isinstance(text, str) else _message_text(text)
        return text, raw.get("success") is False
    if isinstance(raw, list):
        return _message_text(raw), False
    if not isinstance(raw, str):
        return "", False
    if raw.startswith("{"):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping) and "output" in parsed:
            metadata = parsed.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, Mapping) else None
            return str(parsed.get("output") or ""), isinstance(code, int) and code != 0
    match = _EXIT_CODE.search(raw[:400])
    return raw, bool(match and int(match.group(1)) != 0)

"""Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`) into normalised events.

The format is internal and versioned (`version` on every line), so the parser is tolerant: unknown
line types are counted and skipped. What it understands:

- `user` / `assistant` lines threaded by `uuid` -> `parentUuid`. The conversation is the chain from
  the last main-thread line back to the root; a branch abandoned by a rewind (a second user prompt
  under the same parent) is dropped. Other forks are kept: parallel tool calls also fork the
  chain, and their results must not be lost.
- a streamed reply spans several lines with the same `message.id`; its text is merged into one event
  and repeated blocks are dropped.
- sub-agent turns carry `isSidechain` (inline in 1.0.x files, separate `agent-*.jsonl` files later);
  their events are flagged, and the sub-agent's final answer, repeated verbatim as the Task tool's
  result on the main thread, is kept once.
- a session started from an approved plan opens with a user line carrying `planContent`: its message
  ("Implement the following plan: …") is the agent's plan the person approved (`is_plan`).
- `summary` lines (session titles; only those whose `leafUuid` is in this file: Claude Code also
  writes other sessions' titles into a file) and `isCompactSummary` user messages become summaries.
- `thinking` blocks are kept as THINKING events (a low-trust source: searchable in excerpts, never
  extracted from); `redacted_thinking` is dropped.
- `queue-operation` lines: what the person typed while the agent was busy is `enqueue`d with its text.
  Most of it is later delivered as a user line of its own (the `dequeue` that precedes it) and is kept
  there once; a message the agent took in mid-turn (a `remove`) or never got to exists only in the
  queue, and becomes a user event at its place. The harness queues its own notes too (background-task
  notifications, task records as JSON): those are not the person's words.
- a tool call the person rejected with a reason: Claude Code's `tool_result` (`is_error`) is its own
  preamble ("The user doesn't want to proceed with this tool use. … the user said:") and then what
  they typed, which becomes a user event after the result, within the request under way (`steers`: a
  plan sent back with "there is a constant stream of data, does this change the plan?"). Read so only
  for a tool whose failure the harness words itself (an edit, a plan, a read): a command's or a web
  page's error is its own text, which could imitate the preamble. The harness's own reason for a
  question the person chose to clarify, and the note newer versions add after the words, are not theirs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from cairn.transcripts.base import Collector, feed_all
from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, Role, TranscriptEvent
from cairn.transcripts.noise import clean_text, is_harness_message, is_housekeeping, typed_command
from cairn.transcripts.tools import EDIT_TOOLS, PLAN_TOOLS, READ_TOOLS, TODO_TOOLS

AGENT = "claude-code"

# what of a sub-agent's tool call is kept: where it wrote (a file tool's path, a shell command's line)
_WHERE = frozenset({"file_path", "filePath", "path", "notebook_path", "command"})
# Line types with nothing to learn from (undo snapshots, hook progress, titles)
_IGNORED_TYPES = frozenset({"file-history-snapshot", "progress", "custom-title", "agent-name", "tag"})
_DROPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})
# Claude Code ends a compaction summary with its own words to the model (where the full transcript is,
# and to go on "without asking the user any further questions"): the harness's, not the summary's
_COMPACT_TAIL = re.compile(
    r"\s*(?:If you need specific details from before compaction\b[^\n]*\n?)?"
    r"(?:(?:Please\s+)?[Cc]ontinue the conversation from where\b[^\n]*)?\s*$"
)


# Claude Code's result for a tool call the person rejected and said why (`is_error`): its preamble, then
# their words
_REJECTED_SAYING = re.compile(
    r"(?:Error: )?The user doesn't want to proceed with this tool use\.[^\n]*? the user said:\n"
)
_REJECTION_NOTE = re.compile(r"\n\nNote: The user's next message may contain\b.*\Z", re.S)
# tools whose failure the harness words itself (an edit, a plan, the todo list, a read, a question put to
# the person): only their rejection is read for the person's words
_HARNESS_WORDED = EDIT_TOOLS | PLAN_TOOLS | TODO_TOOLS | READ_TOOLS | {"askuserquestion"}
# what the harness says for the person when they chose to clarify an AskUserQuestion's questions
_CLARIFYING = "The user wants to clarify these questions."


@dataclass(frozen=True, slots=True)
class _Node:
    line_no: int
    parent: str | None
    logical_parent: str | None  # set on a compaction boundary, which starts a new root
    sidechain: bool
    prompt: bool  # a user message a person typed (not a tool result, not injected)


@dataclass(frozen=True, slots=True)
class _Queued:
    """A message the person typed while the agent was busy, as the input queue recorded it."""

    line_no: int
    timestamp: str | None
    text: str


def parse_claude_code(
    records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, *, damaged: bool = False
) -> ParsedTranscript:
    """Parse (line number, JSON object) records of a Claude Code transcript."""
    return feed_all(_Parser(), records, lines, damaged)


class _Parser:
    def __init__(self) -> None:
        self.out = Collector(AGENT)
        self.nodes: dict[str, _Node] = {}
        self.order: list[str] = []
        self.text_event_of: dict[str, int] = {}  # message.id -> index of its merged text event
        self.tool_of: dict[str, str] = {}  # each tool call seen (its id) -> the tool's name, lower-cased
        self.messages_seen: set[str] = set()
        self.summaries: list[tuple[str | None, TranscriptEvent]] = []
        self.hooks_seen: set[tuple[str, str]] = set()
        self.queued: list[_Queued] = []
        self.prompts: list[tuple[int, str]] = []  # (line, what the person typed, as compared with the queue)

    # -- per line -------------------------------------------------------------------------------
    def feed(self, line_no: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if not isinstance(kind, str):
            self.out.skipped_unknown["<no type>"] += 1
            return
        handler = {
            "user": self._user,
            "assistant": self._assistant,
            "summary": self._summary,
            "system": self._system,
            "pr-link": self._pr_link,
            "progress": self._hook_progress,
            "queue-operation": self._queue,
        }.get(kind)
        if handler is None:
            if kind in _IGNORED_TYPES:
                self.out.ignored[kind] += 1
                self.out.parsed += 1
            else:
                self.out.skipped_unknown[kind] += 1
            self._remember_node(line_no, record, prompt=False)
            return
        self.out.parsed += 1
        self._metadata(record)
        self.out.branch_at(line_no, record.get("gitBranch"))
        handler(line_no, record)

    def _metadata(self, record: Mapping[str, Any]) -> None:
        self.out.first("session_id", record.get("sessionId"))
        self.out.first("cwd", record.get("cwd"))
        self.out.first("version", record.get("version"))
        self.out.first("git_branch", record.get("gitBranch"))
        self.out.first("started_at", record.get("timestamp"))

    def _remember_node(self, line_no: int, record: Mapping[str, Any], *, prompt: bool) -> None:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or uuid in self.nodes:
            return
        self.nodes[uuid] = _Node(
            line_no=line_no,
            parent=_str(record.get("parentUuid")),
            logical_parent=_str(record.get("logicalParentUuid")),
            sidechain=bool(record.get("isSidechain")),
            prompt=prompt,
        )
        self.order.append(uuid)

    def _event(self, line_no: int, record: Mapping[str, Any], role: Role, **fields: Any) -> TranscriptEvent:
        return TranscriptEvent(
            seq=len(self.out.events),
            line_no=line_no,
            role=role,
            timestamp=_str(record.get("timestamp")),
            is_sidechain=bool(record.get("isSidechain")),
            **fields,
        )

    def _pr_link(self, line_no: int, record: dict[str, Any]) -> None:
        """The pull request the session opened, as Claude Code records it."""
        url = _str(record.get("prUrl"))
        if url:
            number = record.get("prNumber")
            text = f"pull request {'#' + str(number) + ' ' if number else ''}opened: {url}"
            self.out.add(self._event(line_no, record, Role.SYSTEM, text=text))

    def _hook_progress(self, line_no: int, record: dict[str, Any]) -> None:
        """Which hooks the project runs (once each): how its sessions are set up, a fact of the project.
        Tool progress and in-process callbacks say nothing."""
        self._remember_node(line_no, record, prompt=False)
        data = record.get("data")
        if isinstance(data, Mapping) and data.get("type") == "agent_progress":
            self._subagent_calls(line_no, data)
        if not isinstance(data, Mapping) or data.get("type") != "hook_progress":
            self.out.ignored["progress"] += 1
            return
        event, command = _str(data.get("hookEvent")), _str(data.get("command"))
        if not event or not command or command == "callback" or (event, command) in self.hooks_seen:
            self.out.ignored["progress"] += 1
            return
        self.hooks_seen.add((event, command))
        self.out.add(self._event(line_no, record, Role.SYSTEM, text=f"{event} hook runs: {command}"))

    def _subagent_calls(self, line_no: int, data: Mapping[str, Any]) -> None:
        """A sub-agent's tool calls as its progress records show them, kept apart from the session's
        events and with only where they wrote (`_WHERE`): a file it wrote (`cat > /tmp/review.md << EOF`)
        and the main agent read back is the session's own text, not a stranger's."""
        outer = data.get("message")
        inner = outer.get("message") if isinstance(outer, Mapping) else None
        content = inner.get("content") if isinstance(inner, Mapping) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping) or block.get("type") != "tool_use":
                continue
            given = block.get("input")
            where = (
                {k: v for k, v in given.items() if k in _WHERE and isinstance(v, str)}
                if isinstance(given, Mapping)
                else {}
            )
            name = _str(block.get("name"))
            if name and where:
                self.out.subagent_calls.append(
                    TranscriptEvent(
                        seq=len(self.out.subagent_calls),
                        line_no=line_no,
                        role=Role.TOOL_CALL,
                        tool_name=name,
                        tool_input=where,
                        tool_call_id=_str(block.get("id")),
                        is_sidechain=True,
                    )
                )

    def _queue(self, line_no: int, record: dict[str, Any]) -> None:
        """The input queue: only an `enqueue` carries text; `dequeue` and `remove` say nothing of which
        message they took, so whether a message was delivered on a line of its own is told by its text."""
        text = _queued_text(record.get("content")) if record.get("operation") == "enqueue" else None
        if not text or not _typed_by_person(text):
            self.out.ignored["queue-operation"] += 1
            return
        self.queued.append(_Queued(line_no, _str(record.get("timestamp")), text))

    def _queued_messages(self) -> None:
        """Each queued message becomes a user event at its place, unless a later prompt line delivered
        it. A prompt line delivers one queued message, the nearest before it: the same words queued
        twice and delivered once are two requests, the earlier one taken in mid-turn."""
        taken: set[int] = set()
        for queued in reversed(self.queued):
            said = _said(queued.text)
            line = next(
                (
                    n
                    for n, prompt in self.prompts
                    if n > queued.line_no and n not in taken and _delivers(prompt, said)
                ),
                None,
            )
            if line is not None:
                taken.add(line)
                self.out.noise["queued_delivered"] += 1
                continue
            self.out.add(
                TranscriptEvent(
                    seq=len(self.out.events),
                    line_no=queued.line_no,
                    role=Role.USER,
                    text=queued.text,
                    timestamp=queued.timestamp,
                )
            )

    def _user(self, line_no: int, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.out.skipped_unknown["user:<no content>"] += 1
            self._remember_node(line_no, record, prompt=False)
            return
        has_result = any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks)
        meta = bool(record.get("isMeta"))
        compact = bool(record.get("isCompactSummary"))
        self._remember_node(line_no, record, prompt=not (has_result or meta or compact))
        if meta:
            # expanded slash-command bodies, caveats, skill prompts: written by the tool, not the user
            self.out.noise["meta_message"] += 1
            return
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                role = Role.SUMMARY if compact else Role.USER
                said = _str(block.get("text")) or ""
                if compact:
                    said = _COMPACT_TAIL.sub("", said)
                # the plan the person approved, sent for them ("Implement the following plan:")
                plan = role is Role.USER and isinstance(record.get("planContent"), str)
                self.out.add(self._event(line_no, record, role, text=said, is_plan=plan))
                if role is Role.USER and not has_result and not record.get("isSidechain"):
                    self.prompts.append((line_no, _said(said)))
            elif btype == "tool_result":
                text = _flatten(block.get("content"))
                call = _str(block.get("tool_use_id"))
                # only a tool whose failure is always the harness's words: a command's, a web page's or
                # an MCP server's error text is theirs, and could be written to read as the person's
                refused = block.get("is_error") and self.tool_of.get(call or "") in _HARNESS_WORDED
                preamble, reason = _rejection(text) if refused else (text, "")
                self.out.add(
                    self._event(
                        line_no,
                        record,
                        Role.TOOL_RESULT,
                        text=preamble,
                        tool_call_id=call,
                        is_error=bool(block.get("is_error")),
                    )
                )
                if reason:
                    self.out.add(self._event(line_no, record, Role.USER, text=reason, steers=True))
            elif btype in ("image", "document"):
                self.out.ignored[f"user:{btype}"] += 1
            else:
                self.out.skipped_unknown[f"user:{btype}"] += 1

    def _tool_use(self, line_no: int, record: dict[str, Any], message_id: str | None, block: Mapping) -> None:
        call_id = _str(block.get("id"))
        if call_id and call_id in self.tool_of:
            self.out.noise["streamed_duplicate"] += 1
            return
        if call_id:
            self.tool_of[call_id] = (_str(block.get("name")) or "").lower()
        tool_input = block.get("input")
        self.out.add(
            self._event(
                line_no,
                record,
                Role.TOOL_CALL,
                tool_name=_str(block.get("name")),
                tool_input=tool_input if isinstance(tool_input, (Mapping, str)) else None,
                tool_call_id=call_id,
                message_id=message_id,
            )
        )

    def _assistant(self, line_no: int, record: dict[str, Any]) -> None:
        self._remember_node(line_no, record, prompt=False)
        message = record.get("message")
        if not isinstance(message, Mapping):
            self.out.skipped_unknown["assistant:<no message>"] += 1
            return
        model = _str(message.get("model"))
        if model == "<synthetic>" or record.get("isApiErrorMessage"):
            # "API Error: ..." / "No response requested." lines written by the client, not the model
            self.out.noise["synthetic_message"] += 1
            return
        self.out.first("model", model)
        message_id = _str(message.get("id")) or _str(record.get("uuid"))
        if message_id in self.messages_seen:
            self.out.streamed_merged += 1
        elif message_id:
            self.messages_seen.add(message_id)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                self._assistant_text(line_no, record, message_id, _str(block.get("text")) or "")
            elif btype in ("tool_use", "server_tool_use"):
                self._tool_use(line_no, record, message_id, block)
            elif btype == "thinking" and (thought := _str(block.get("thinking"))):
                self.out.add(self._event(line_no, record, Role.THINKING, text=thought, message_id=message_id))
            elif btype in _DROPPED_BLOCKS:
                self.out.noise["thinking"] += 1  # redacted (encrypted) reasoning says nothing
            elif isinstance(btype, str) and btype.endswith("_tool_result"):  # web_search_tool_result...
                self.out.add(
                    self._event(
                        line_no,
                        record,
                        Role.TOOL_RESULT,
                        text=_flatten(block.get("content")),
                        tool_call_id=_str(block.get("tool_use_id")),
                        message_id=message_id,
                    )
                )
            else:
                self.out.skipped_unknown[f"assistant:{btype}"] += 1

    def _assistant_text(
        self, line_no: int, record: Mapping[str, Any], message_id: str | None, text: str
    ) -> None:
        index = self.text_event_of.get(message_id) if message_id else None
        if index is None:
            if message_id:
                self.text_event_of[message_id] = len(self.out.events)
            self.out.add(self._event(line_no, record, Role.ASSISTANT, text=text, message_id=message_id))
            return
        earlier = self.out.events[index]
        if text == earlier.text or earlier.text.endswith(text):
            self.out.noise["streamed_duplicate"] += 1
            return
        # a progressively longer copy replaces the shorter one; a new block is appended
        merged = text if text.startswith(earlier.text) else f"{earlier.text}\n\n{text}"
        self.out.events[index] = replace(earlier, text=merged, line_end=line_no)

    def _summary(self, line_no: int, record: dict[str, Any]) -> None:
        event = self._event(line_no, record, Role.SUMMARY, text=_str(record.get("summary")) or "")
        self.summaries.append((_str(record.get("leafUuid")), event))

    def _system(self, line_no: int, record: dict[str, Any]) -> None:
        self._remember_node(line_no, record, prompt=False)
        subtype = _str(record.get("subtype")) or "<none>"
        if subtype == "compact_boundary":
            text = _str(record.get("content")) or "Conversation compacted"
            self.out.add(self._event(line_no, record, Role.SYSTEM, text=text))
        else:
            self.out.ignored[f"system:{subtype}"] += 1

    # -- whole file -----------------------------------------------------------------------------
    def finish(self, lines: LineStats, *, damaged: bool) -> ParsedTranscript:
        self._queued_messages()
        dropped_lines = _abandoned_branch_lines(self.nodes, self.order)
        self.out.off_branch_dropped = len(dropped_lines)
        main_results = {
            e.text.strip()
            for e in self.out.events
            if e.role is Role.TOOL_RESULT and not e.is_sidechain and len(e.text) > 40
        }
        kept: list[TranscriptEvent] = []
        for event in self.out.events:
            if event.line_no in dropped_lines:
                continue
            if event.is_sidechain and event.role is Role.ASSISTANT and event.text.strip() in main_results:
                self.out.noise["sidechain_duplicate"] += 1
                continue
            kept.append(event)
        for leaf, event in self.summaries:
            if leaf is not None and leaf not in self.nodes:
                self.out.noise["foreign_summary"] += 1
                continue
            kept.append(event)
        kept.sort(key=lambda e: e.line_no)  # summaries sit at the top or bottom of the file
        self.out.events = kept
        return self.out.finish(lines, damaged=damaged)


def _abandoned_branch_lines(nodes: Mapping[str, _Node], order: list[str]) -> set[int]:
    """Lines on branches left behind by a rewind: forks off the live chain that start with a prompt."""
    main = [uuid for uuid in order if not nodes[uuid].sidechain]
    if not main:
        return set()
    chain: set[str] = set()
    cursor: str | None = main[-1]  # the newest main-thread line is the leaf the session ended on
    while cursor is not None and cursor in nodes and cursor not in chain:
        chain.add(cursor)
        node = nodes[cursor]
        cursor = node.parent or node.logical_parent
    verdict: dict[str, bool] = {}
    for uuid in main:
        if uuid in chain or uuid in verdict:
            continue
        path: list[str] = []
        cursor, abandoned = uuid, False
        while cursor is not None:
            if cursor in verdict:
                abandoned = verdict[cursor]
                break
            node = nodes.get(cursor)
            if node is None or cursor in path:
                break
            path.append(cursor)
            parent = node.parent or node.logical_parent
            if parent in chain:
                abandoned = node.prompt
                break
            cursor = parent
        for seen in path:
            verdict[seen] = abandoned
    return {nodes[uuid].line_no for uuid, abandoned in verdict.items() if abandoned}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _queued_text(content: object) -> str | None:
    """An enqueued message's text: a string, or the text blocks of a message with attachments."""
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        texts = [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        return "\n".join(texts).strip() or None
    return None


def _typed_by_person(text: str) -> bool:
    """Whether a queued message is the person's: the harness queues background-task notifications
    (one tagged element and a line of instructions) and task records (a JSON object with a task id);
    a command that only manages the session (`/clear`) asks nothing."""
    if is_harness_message(text) or is_housekeeping(text):
        return False
    if text.startswith("{"):
        try:
            record = json.loads(text)
        except ValueError:
            return True
        return not (isinstance(record, dict) and "task_id" in record)
    return True


def _said(text: str) -> str:
    """What a person typed, as a queued message and the prompt line that delivers it are compared:
    a slash command's wrapper read as `/name args` (housekeeping ones too), injected blocks cut,
    whitespace folded."""
    return " ".join((typed_command(text) or clean_text(text)[0]).split())


def _delivers(prompt: str, queued: str) -> bool:
    """Whether a prompt line is a queued message delivered. A queued slash command is delivered as the
    command the prompt box completed it to (`/review` -> `/review-skill`), with the same arguments."""
    if prompt == queued:
        return True
    if not (queued.startswith("/") and prompt.startswith("/")):
        return False
    name, _, args = queued.partition(" ")
    ran, _, ran_args = prompt.partition(" ")
    return ran.startswith(name) and args == ran_args


def _rejection(text: str) -> tuple[str, str]:
    """A rejected tool call's result as (the harness's preamble, the words the person gave as their
    reason); ("the text", "") for any other result."""
    found = _REJECTED_SAYING.match(text)
    if not found:
        return text, ""
    reason = _REJECTION_NOTE.sub("", text[found.end() :]).strip()
    if not reason or reason.startswith(_CLARIFYING):
        return text, ""
    return found.group().rstrip(), reason


def _flatten(content: object) -> str:
    """Tool-result content is a string or a list of blocks; keep the text, mark the rest."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") in ("image", "document"):
                parts.append(f"[{block.get('type')}]")
    return "\n".join(parts)

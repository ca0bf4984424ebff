"""The normalised transcript: one event model every agent-specific parser produces.

Parsers turn Claude Code JSONL, Codex rollouts and Gemini CLI session files into `TranscriptEvent`s
so the learning stages (chunk, extract, mine tools, reflect) never look at an agent's own format.
Frozen dataclasses with no I/O; `line_no` ties every event back to the stored transcript for provenance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cairn.project_files import ProjectFile


class Role(StrEnum):
    USER = "user"  # something a person typed (or a sub-agent's task prompt when is_sidechain)
    ASSISTANT = "assistant"  # the model's visible text
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    SUMMARY = "summary"  # compaction summaries and session titles
    SYSTEM = "system"  # agent-side notices worth keeping (e.g. a compaction boundary)
    THINKING = "thinking"  # the model's visible reasoning: low trust, searchable, never extracted from


@dataclass(frozen=True, slots=True)
class TranscriptEvent:
    seq: int  # position in the normalised list, 0-based, dense after filtering
    line_no: int  # 1-based line of the source file the event came from (the first one when merged)
    role: Role
    text: str = ""
    tool_name: str | None = None
    tool_input: Mapping[str, Any] | str | None = None  # parsed arguments when they are JSON
    tool_call_id: str | None = None  # pairs a tool_call with its tool_result
    is_error: bool = False
    timestamp: str | None = None  # ISO-8601 as written by the agent; not parsed, agents differ
    is_sidechain: bool = False  # produced by a sub-agent (Claude Code Task), not the main thread
    message_id: str | None = None  # the model message this came from; streamed lines share it
    line_end: int | None = None  # last source line when several lines were merged into one event
    # a plan the agent wrote, sent as the person's message when they approved it ("Implement the
    # following plan: …"): the person asked for it, the agent said it
    is_plan: bool = False
    # the person's words within the request under way, not a new one: the reason they gave for
    # rejecting a tool call ("does this change the plan?"), which the agent answers in the same turn
    steers: bool = False

    @property
    def last_line(self) -> int:
        return self.line_end if self.line_end is not None else self.line_no

    @property
    def size(self) -> int:
        """Approximate bytes this event contributes to a chunk (text plus serialised input)."""
        size = len(self.text.encode("utf-8", "replace"))
        if isinstance(self.tool_input, str):
            size += len(self.tool_input.encode("utf-8", "replace"))
        elif self.tool_input:
            size += len(repr(self.tool_input).encode("utf-8", "replace"))
        return size + len(self.tool_name or "")


@dataclass(frozen=True, slots=True)
class ParseStats:
    """What happened to every input line, so a caller can tell a clean parse from a salvaged one."""

    lines: int = 0  # non-empty lines seen
    parsed: int = 0  # lines that were valid JSON objects of a known type
    skipped_unknown: Mapping[str, int] = field(default_factory=dict)  # type -> count, never fatal
    ignored: Mapping[str, int] = field(default_factory=dict)  # known types with nothing to learn from
    malformed_lines: int = 0  # not JSON, or JSON that is not an object
    truncated_tail: bool = False  # the last line was cut off mid-write (agent still running, crash)
    invalid_utf8: bool = False  # some bytes were replaced while decoding
    noise_dropped: Mapping[str, int] = field(default_factory=dict)  # reason -> count
    streamed_merged: int = 0  # assistant lines folded into an earlier line of the same message
    off_branch_dropped: int = 0  # Claude Code lines on an abandoned (rewound) branch

    @property
    def noise_total(self) -> int:
        return sum(self.noise_dropped.values())


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    agent: str  # "claude-code" | "codex" | "gemini-cli" | "unknown"
    session_id: str | None
    events: tuple[TranscriptEvent, ...]
    stats: ParseStats
    cwd: str | None = None
    git_remote: str | None = None
    git_branch: str | None = None
    branches: tuple[tuple[int, str], ...] = ()  # (line, branch) at each change, the first included
    git_commit: str | None = None
    version: str | None = None  # the agent's own format/CLI version
    model: str | None = None
    started_at: str | None = None
    # the repository's manifests the capture hook sent with the session (not the agent's events)
    project_files: tuple[ProjectFile, ...] = ()
    # a sub-agent's tool calls that the file keeps only as progress (Claude Code's agent_progress), with
    # no more of their input than where they wrote: what the session wrote is its own text when read back
    subagent_calls: tuple[TranscriptEvent, ...] = ()

    def by_role(self, role: Role) -> tuple[TranscriptEvent, ...]:
        return tuple(e for e in self.events if e.role is role)

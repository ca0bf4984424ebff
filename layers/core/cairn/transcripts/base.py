"""What every agent parser shares: a collector for raw events and counts, finished into a ParsedTranscript.

A parser appends events in source order and counts what it skipped; `finish` runs the noise filter,
renumbers events and freezes the statistics. Keeping this in one place means both parsers report
the same way and the noise rules are applied exactly once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from cairn.transcripts.lines import LineStats
from cairn.transcripts.model import ParsedTranscript, ParseStats, TranscriptEvent
from cairn.transcripts.noise import filter_events

_REF = re.compile(r"[^\s\x00-\x1f\x7f~^:?*\\[]{1,200}")  # what `git check-ref-format` allows, roughly


class RecordParser(Protocol):
    """One agent's parser: fed a transcript's records in order, then finished."""

    def feed(self, line_no: int, record: dict[str, Any]) -> None: ...

    def finish(self, lines: LineStats, *, damaged: bool) -> ParsedTranscript: ...


def feed_all(
    parser: RecordParser, records: Iterable[tuple[int, dict[str, Any]]], lines: LineStats, damaged: bool
) -> ParsedTranscript:
    """Feed every (line number, JSON object) record to `parser`, then finish it."""
    for line_no, record in records:
        parser.feed(line_no, record)
    return parser.finish(lines, damaged=damaged)


@dataclass
class Collector:
    agent: str
    events: list[TranscriptEvent] = field(default_factory=list)
    skipped_unknown: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)
    noise: Counter[str] = field(default_factory=Counter)
    parsed: int = 0
    streamed_merged: int = 0
    off_branch_dropped: int = 0
    session_id: str | None = None
    cwd: str | None = None
    git_remote: str | None = None
    git_branch: str | None = None
    # (line, branch) each time the checkout's branch changed, the session's own first: agents that
    # record the branch on every line (Claude Code) show a session moving to a feature branch
    branches: list[tuple[int, str]] = field(default_factory=list)
    git_commit: str | None = None
    version: str | None = None
    model: str | None = None
    started_at: str | None = None
    subagent_calls: list[TranscriptEvent] = field(default_factory=list)

    def add(self, event: TranscriptEvent) -> None:
        self.events.append(event)

    def first(self, name: str, value: object) -> None:
        """Set a metadata field unless already set: the session's start describes it best."""
        if value and getattr(self, name) is None:
            setattr(self, name, str(value))

    def branch_at(self, line_no: int, value: object) -> None:
        """The checkout's branch as of this line; a change is kept, a repeat is not. A value no git
        ref could be (whitespace, control characters, over 200 characters) is not a branch."""
        if not isinstance(value, str) or not _REF.fullmatch(value):
            return
        if not self.branches or self.branches[-1][1] != value:
            self.branches.append((line_no, value))

    def finish(self, lines: LineStats, *, damaged: bool = False) -> ParsedTranscript:
        events = filter_events(self.events, self.noise)
        stats = ParseStats(
            lines=lines.lines,
            parsed=self.parsed,
            skipped_unknown=dict(self.skipped_unknown),
            ignored=dict(self.ignored),
            malformed_lines=lines.malformed,
            # a compressed upload cut off mid-stream also loses its tail
            truncated_tail=lines.truncated_tail or damaged,
            invalid_utf8=lines.invalid_utf8,
            noise_dropped=dict(self.noise),
            streamed_merged=self.streamed_merged,
            off_branch_dropped=self.off_branch_dropped,
        )
        return ParsedTranscript(
            agent=self.agent,
            session_id=self.session_id,
            events=tuple(events),
            stats=stats,
            cwd=self.cwd,
            git_remote=self.git_remote,
            git_branch=self.git_branch,
            branches=tuple(self.branches),
            git_commit=self.git_commit,
            version=self.version,
            model=self.model,
            started_at=self.started_at,
            subagent_calls=tuple(self.subagent_calls),
        )


def record_type(obj: Mapping[str, Any]) -> str | None:
    """A record's `type` when it is a string; a hostile list or object is no type (and not hashable)."""
    value = obj.get("type")
    return value if isinstance(value, str) else None

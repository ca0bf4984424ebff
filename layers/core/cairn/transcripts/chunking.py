"""Cut a transcript's events into extraction-sized chunks on turn boundaries.

A turn is a main-thread user message and everything up to the next one, so a chunk never separates
a request from the work it caused (sub-agent prompts do not start turns: they belong to the Task
call that spawned them). Whole turns are packed greedily up to `target_bytes`; a single turn larger
than that is split between events. One event larger than the target becomes a chunk of its own:
events are never cut, so line spans stay exact for provenance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cairn.transcripts.model import Role, TranscriptEvent

DEFAULT_CHUNK_BYTES = 24_000


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    events: tuple[TranscriptEvent, ...]
    line_start: int  # first source line covered (1-based, inclusive)
    line_end: int  # last source line covered (inclusive)
    bytes: int  # sum of the events' sizes

    @property
    def starts_turn(self) -> bool:
        first = self.events[0]
        return first.role is Role.USER and not first.is_sidechain


def split_turns(events: Iterable[TranscriptEvent]) -> list[list[TranscriptEvent]]:
    """Group events into turns; events before the first user message form a turn of their own."""
    turns: list[list[TranscriptEvent]] = []
    for event in events:
        if not turns or (event.role is Role.USER and not event.is_sidechain):
            turns.append([])
        turns[-1].append(event)
    return turns


def chunk_events(events: Sequence[TranscriptEvent], target_bytes: int = DEFAULT_CHUNK_BYTES) -> list[Chunk]:
    if target_bytes <= 0:
        raise ValueError("target_bytes must be positive")
    groups: list[list[TranscriptEvent]] = []
    current: list[TranscriptEvent] = []
    current_size = 0
    for turn in split_turns(events):
        turn_size = sum(e.size for e in turn)
        if current and current_size + turn_size > target_bytes:
            groups.append(current)
            current, current_size = [], 0
        if turn_size <= target_bytes:
            current.extend(turn)
            current_size += turn_size
            continue
        # an oversized turn: split between events, continuing into fresh chunks
        for event in turn:
            if current and current_size + event.size > target_bytes:
                groups.append(current)
                current, current_size = [], 0
            current.append(event)
            current_size += event.size
    if current:
        groups.append(current)
    return [_chunk(index, group) for index, group in enumerate(groups)]


def _chunk(index: int, group: list[TranscriptEvent]) -> Chunk:
    return Chunk(
        index=index,
        events=tuple(group),
        line_start=min(e.line_no for e in group),
        line_end=max(e.last_line for e in group),
        bytes=sum(e.size for e in group),
    )

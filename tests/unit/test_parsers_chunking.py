"""Chunking: turn boundaries are respected, oversized turns split between events, line spans exact."""

from __future__ import annotations

import pytest
from cairn.transcripts import Role, TranscriptEvent, chunk_events
from cairn.transcripts.chunking import split_turns

pytestmark = pytest.mark.unit


def ev(seq: int, role: Role, size: int = 10, *, sidechain: bool = False) -> TranscriptEvent:
    return TranscriptEvent(seq=seq, line_no=seq + 1, role=role, text="x" * size, is_sidechain=sidechain)


def turn(start: int, size: int) -> list[TranscriptEvent]:
    return [ev(start, Role.USER, size), ev(start + 1, Role.ASSISTANT, size)]


def test_a_turn_is_a_main_thread_user_message_and_everything_until_the_next():
    events = [ev(0, Role.ASSISTANT), *turn(1, 10), ev(3, Role.USER, sidechain=True), *turn(4, 10)]

    assert [[e.seq for e in t] for t in split_turns(events)] == [[0], [1, 2, 3], [4, 5]]


def test_small_turns_are_packed_together_up_to_the_target():
    events = turn(0, 100) + turn(2, 100) + turn(4, 100)

    chunks = chunk_events(events, target_bytes=450)

    assert [[e.seq for e in c.events] for c in chunks] == [[0, 1, 2, 3], [4, 5]]
    assert [(c.index, c.line_start, c.line_end, c.bytes) for c in chunks] == [(0, 1, 4, 400), (1, 5, 6, 200)]
    assert all(c.starts_turn for c in chunks)


def test_a_turn_never_straddles_two_chunks_when_it_fits_in_one():
    events = turn(0, 300) + turn(2, 300)

    assert len(chunk_events(events, target_bytes=1200)) == 1
    chunks = chunk_events(events, target_bytes=1000)  # room for one and a half turns
    assert [[e.seq for e in c.events] for c in chunks] == [[0, 1], [2, 3]]


def test_an_oversized_turn_is_split_at_event_boundaries():
    big = [ev(0, Role.USER, 100)] + [ev(i, Role.TOOL_RESULT, 100) for i in range(1, 10)]

    chunks = chunk_events(big + turn(10, 10), target_bytes=350)

    assert [len(c.events) for c in chunks] == [3, 3, 3, 3]
    assert chunks[-1].events[-2].seq == 10  # the next turn follows on from the split turn's tail
    assert all(c.bytes <= 350 for c in chunks)
    assert [e.seq for c in chunks for e in c.events] == list(range(12))


def test_a_single_event_larger_than_the_target_is_a_chunk_of_its_own():
    events = [ev(0, Role.USER, 10), ev(1, Role.TOOL_RESULT, 5000), ev(2, Role.ASSISTANT, 10)]

    chunks = chunk_events(events, target_bytes=100)

    assert [[e.seq for e in c.events] for c in chunks] == [[0], [1], [2]]


def test_merged_events_extend_the_chunk_line_span():
    merged = TranscriptEvent(seq=1, line_no=2, line_end=9, role=Role.ASSISTANT, text="a")

    chunk = chunk_events([ev(0, Role.USER), merged])[0]

    assert (chunk.line_start, chunk.line_end) == (1, 9)


def test_no_events_no_chunks():
    assert chunk_events([]) == []

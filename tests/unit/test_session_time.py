"""When a session said what it taught (`pipeline.models.taught_at`): its transcript's last dated event."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cairn.domain.models import Session
from cairn.pipeline.models import EventDoc, taught_at
from cairn.transcripts.model import Role

pytestmark = pytest.mark.unit
SESSION = Session("s", "t", "p", "claude-code", started_at=datetime(2026, 3, 1, 9, tzinfo=UTC))


def event(seq: int, timestamp: str | None) -> EventDoc:
    return EventDoc(seq=seq, line_no=seq + 1, role=Role.USER, text="x", timestamp=timestamp)


def test_a_session_is_dated_by_its_last_dated_event_where_the_work_stood_at_its_end():
    events = [event(0, "2026-03-01T09:00:00.000Z"), event(1, "2026-03-01T17:45:10Z"), event(2, None)]
    assert taught_at(events, SESSION) == datetime(2026, 3, 1, 17, 45, 10, tzinfo=UTC)


def test_a_time_with_an_offset_or_none_is_read_and_an_unreadable_one_skipped():
    assert taught_at([event(0, "2026-03-01T10:00:00+02:00")], SESSION) == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert taught_at([event(0, "2026-03-01T10:00:00")], SESSION) == datetime(2026, 3, 1, 10, tzinfo=UTC)
    assert taught_at([event(0, "yesterday")], SESSION) == SESSION.started_at


def test_a_transcript_with_no_dates_is_dated_by_when_the_session_ran():
    assert taught_at([event(0, None)], SESSION) == SESSION.started_at
    assert taught_at([], Session("s", "t", "p", "codex")) is None

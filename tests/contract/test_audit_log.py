"""Contract of the AuditLog port over every adapter: append, per target, per team, paging, isolation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.audit import AuditAction, AuditEntry, in_request, new_entry
from cairn.domain.errors import InvalidInput

pytestmark = pytest.mark.contract

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def entry(team: str, target: str, minutes: int, action: AuditAction = AuditAction.WRITE) -> AuditEntry:
    return new_entry(team, "ana", "key_1", action, target, T0 + timedelta(minutes=minutes), agent="codex")


def test_an_entry_comes_back_with_every_field(audit_log):
    with in_request("req-123", agent="claude-code"):
        e = new_entry(
            "team_a", "ana", "key_1", AuditAction.SUPERSEDE, "mem_1", T0, project="p", details={"by": "mem_2"}
        )
    audit_log.record([e])
    assert audit_log.for_target("team_a", "mem_1") == [e]
    assert (e.request_id, e.agent, e.details) == ("req-123", "claude-code", {"by": "mem_2"})


def test_a_targets_history_is_newest_first_and_only_its_own(audit_log):
    a1, b, a2 = entry("team_a", "mem_a", 1), entry("team_a", "mem_b", 2), entry("team_a", "mem_a", 3)
    audit_log.record([a1, b, a2])
    assert audit_log.for_target("team_a", "mem_a") == [a2, a1]
    assert audit_log.for_target("team_a", "mem_a", limit=1) == [a2]
    assert audit_log.for_target("team_a", "mem_none") == []


def test_the_team_trail_pages_newest_first_without_gaps(audit_log):
    entries = [entry("team_a", f"mem_{i}", i) for i in range(7)]
    audit_log.record(entries)
    seen, cursor = [], None
    while True:
        page = audit_log.list("team_a", limit=2, cursor=cursor)
        seen += page.items
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == entries[::-1]


def test_no_team_sees_another_teams_entries(audit_log):
    audit_log.record([entry("team_a", "mem_x", 1), entry("team_b", "mem_x", 2)])
    assert [e.team_id for e in audit_log.list("team_b").items] == ["team_b"]
    assert [e.team_id for e in audit_log.for_target("team_b", "mem_x")] == ["team_b"]


def test_recording_the_same_entry_twice_keeps_one(audit_log):
    e = entry("team_a", "mem_1", 1)
    audit_log.record([e])
    audit_log.record([e])
    assert audit_log.list("team_a").items == (e,)


def test_a_malformed_cursor_is_invalid_input(audit_log):
    with pytest.raises(InvalidInput):
        audit_log.list("team_a", cursor="!!not-a-cursor")

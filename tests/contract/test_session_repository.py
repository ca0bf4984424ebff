"""Contract of SessionRepository, run over every registered `stores` adapter."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.ids import new_id
from cairn.domain.models import Session

pytestmark = pytest.mark.contract

TEAM_A = "team-a"
TEAM_B = "team-b"
BASE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def session(team_id: str = TEAM_A, minute: int = 0, **fields) -> Session:
    fields.setdefault("project", "proj-1")
    fields.setdefault("agent", "claude-code")
    fields.setdefault("updated_at", BASE + timedelta(minutes=minute))
    return Session(id=fields.pop("id", new_id("ses")), team_id=team_id, **fields)


def list_all(repo, team_id: str, project: str | None = None, limit: int = 50) -> list[Session]:
    items: list[Session] = []
    cursor = None
    for _ in range(1000):
        page = repo.list(team_id, project, limit=limit, cursor=cursor)
        assert len(page.items) <= limit
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor
    raise AssertionError("pagination never ended")


def test_a_session_read_back_equals_the_session_stored_in_every_field(stores):
    s = Session(
        id=new_id("ses"),
        team_id=TEAM_A,
        project="github.com/acme/api",
        agent="codex-cli",
        member="alice",
        started_at=BASE,
        ended_at=BASE + timedelta(minutes=42, microseconds=9),
        transcript_keys=(
            "teams/team-a/projects/p/sessions/s/0.jsonl",
            "teams/team-a/projects/p/sessions/s/1.jsonl",
        ),
        status="learned",
        stats={"memories": 7, "chunks": [1, 2], "cost": {"usd": 0.0123}},
        updated_at=BASE + timedelta(hours=1),
    )
    stores.sessions.put(s)
    assert stores.sessions.get(TEAM_A, s.id) == s


def test_a_session_without_project_or_times_round_trips(stores):
    s = session(project=None)
    stores.sessions.put(s)
    assert stores.sessions.get(TEAM_A, s.id) == s


def test_put_replaces_an_existing_session(stores):
    s = session(status="received")
    stores.sessions.put(s)
    done = replace(s, status="learned", stats={"memories": 3}, updated_at=BASE + timedelta(days=1))
    stores.sessions.put(done)
    assert stores.sessions.get(TEAM_A, s.id) == done
    assert [x.id for x in list_all(stores.sessions, TEAM_A)] == [s.id]


def test_getting_an_unknown_session_returns_none(stores):
    assert stores.sessions.get(TEAM_A, new_id("ses")) is None


def test_sessions_are_listed_most_recently_updated_first(stores):
    early, late, middle = session(minute=1), session(minute=30), session(minute=10)
    for s in (early, late, middle):
        stores.sessions.put(s)
    assert [s.id for s in list_all(stores.sessions, TEAM_A)] == [late.id, middle.id, early.id]


def test_updating_a_session_moves_it_to_the_front(stores):
    a, b = session(minute=1), session(minute=2)
    stores.sessions.put(a)
    stores.sessions.put(b)
    stores.sessions.put(replace(a, status="processing", updated_at=BASE + timedelta(minutes=3)))
    assert [s.id for s in list_all(stores.sessions, TEAM_A)] == [a.id, b.id]


def test_sessions_can_be_listed_by_project(stores):
    p1 = [session(minute=i, project="proj-1") for i in range(3)]
    p2 = session(minute=9, project="proj-2")
    for s in (*p1, p2):
        stores.sessions.put(s)
    assert [s.id for s in list_all(stores.sessions, TEAM_A, "proj-1")] == [s.id for s in reversed(p1)]
    assert [s.id for s in list_all(stores.sessions, TEAM_A, "proj-2")] == [p2.id]
    assert len(list_all(stores.sessions, TEAM_A)) == 4


def test_session_pagination_walks_every_session_once_over_several_pages(stores):
    ss = [session(minute=i % 3) for i in range(8)]  # repeated timestamps straddle page boundaries
    for s in ss:
        stores.sessions.put(s)
    first = stores.sessions.list(TEAM_A, limit=3)
    assert len(first.items) == 3 and first.next_cursor is not None
    expected = sorted(ss, key=lambda s: (s.updated_at, s.id), reverse=True)
    assert [s.id for s in list_all(stores.sessions, TEAM_A, limit=3)] == [s.id for s in expected]


def test_iter_team_yields_every_session_of_the_team(stores):
    ss = [session(minute=i) for i in range(4)]
    for s in ss:
        stores.sessions.put(s)
    stores.sessions.put(session(team_id=TEAM_B))
    assert sorted(s.id for s in stores.sessions.iter_team(TEAM_A)) == sorted(s.id for s in ss)


@pytest.fixture
def team_a_session(stores) -> Session:
    s = session(member="alice")
    stores.sessions.put(s)
    return s


def test_another_team_cannot_get_or_list_a_session(stores, team_a_session):
    assert stores.sessions.get(TEAM_B, team_a_session.id) is None
    assert stores.sessions.list(TEAM_B).items == ()
    assert stores.sessions.list(TEAM_B, "proj-1").items == ()
    assert list(stores.sessions.iter_team(TEAM_B)) == []


def test_another_teams_session_with_the_same_id_leaves_this_teams_session_alone(stores, team_a_session):
    stores.sessions.put(replace(team_a_session, team_id=TEAM_B, status="failed"))
    assert stores.sessions.get(TEAM_A, team_a_session.id) == team_a_session


def test_update_creates_a_session_that_does_not_exist_yet(stores):
    s = session()
    stored = stores.sessions.update(TEAM_A, s.id, lambda existing: s if existing is None else None)
    assert stored == s
    assert stores.sessions.get(TEAM_A, s.id) == s


def test_update_stores_nothing_when_the_change_returns_none(stores):
    s = session(status="learned")
    stores.sessions.put(s)
    assert stores.sessions.update(TEAM_A, s.id, lambda existing: None) is None
    assert stores.sessions.update(TEAM_A, "ses-absent", lambda existing: existing) is None
    assert stores.sessions.get(TEAM_A, s.id) == s
    assert stores.sessions.get(TEAM_A, "ses-absent") is None


def test_concurrent_updates_of_one_session_lose_nothing(stores):
    import threading

    s = session()
    stores.sessions.put(s)
    keys = [f"teams/{TEAM_A}/projects/p/sessions/{s.id}/transcript-{n}.jsonl.gz" for n in range(1, 9)]
    start = threading.Barrier(len(keys))

    def add(key: str) -> None:
        start.wait()
        stores.sessions.update(
            TEAM_A,
            s.id,
            lambda cur: replace(cur, transcript_keys=tuple(sorted({*cur.transcript_keys, key}))),
        )

    threads = [threading.Thread(target=add, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert stores.sessions.get(TEAM_A, s.id).transcript_keys == tuple(sorted(keys))


def test_an_update_sees_what_another_writer_stored_before_it(stores):
    s = session(status="processing")
    stores.sessions.put(s)
    stores.sessions.update(TEAM_A, s.id, lambda cur: replace(cur, transcript_keys=("k1",)))
    done = stores.sessions.update(TEAM_A, s.id, lambda cur: replace(cur, status="learned"))
    assert done.transcript_keys == ("k1",) and done.status == "learned"

"""Contract of MemoryRepository, run over every registered `stores` adapter.

Written only against the port: `stores.memories` (and `stores.relations` for the delete cascade).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.errors import Conflict, InvalidInput, NotFound
from cairn.domain.ids import new_id
from cairn.domain.models import (
    Memory,
    MemoryFilter,
    MemoryKind,
    Provenance,
    Relation,
    Scope,
    content_hash,
)

pytestmark = pytest.mark.contract

TEAM_A = "team-a"
TEAM_B = "team-b"
BASE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def memory(team_id: str = TEAM_A, minute: int = 0, **fields) -> Memory:
    fields.setdefault("kind", MemoryKind.FACT)
    fields.setdefault("content", f"content {new_id('c')}")
    fields.setdefault("project", "proj-1")
    fields.setdefault("content_hash", content_hash(fields["kind"], fields["content"]))
    fields.setdefault("created_at", BASE + timedelta(minutes=minute))
    return Memory(id=fields.pop("id", new_id("mem")), team_id=team_id, **fields)


def list_all(repo, team_id: str, flt: MemoryFilter, limit: int = 50) -> list[Memory]:
    """Follow cursors to the end, checking every page keeps to the limit."""
    items: list[Memory] = []
    cursor = None
    for _ in range(1000):
        page = repo.list(team_id, flt, limit=limit, cursor=cursor)
        assert len(page.items) <= limit
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor
    raise AssertionError("pagination never ended")


def ids(memories) -> list[str]:
    return [m.id for m in memories]


# --- round trip and basic CRUD ------------------------------------------------------------------


def test_a_memory_read_back_equals_the_memory_stored_in_every_field(stores):
    m = Memory(
        id=new_id("mem"),
        team_id=TEAM_A,
        kind=MemoryKind.PROCEDURE,
        content="Run `make migrate` before the tests — ünïcödé and\nnewlines survive",
        scope=Scope.PERSONAL,
        project="github.com/acme/api",
        owner="alice",
        title="Migrations first",
        tags=("db", "tests", "migrations"),
        pinned=True,
        confidence=0.37,
        details={"steps": ["make migrate", "make test"], "success_count": 3, "nested": {"x": 1.5, "y": None}},
        provenance=Provenance(
            session_id="ses_1", transcript_key="teams/a/t.jsonl", line_start=10, line_end=42, agent="claude"
        ),
        valid_from=BASE - timedelta(days=1, microseconds=7),
        valid_to=None,
        superseded_by=None,
        created_at=BASE + timedelta(microseconds=123456),
        updated_at=BASE + timedelta(hours=1),
        access_count=4,
        last_accessed_at=BASE + timedelta(hours=2),
        content_hash="f" * 64,
        embedding_version="minilm-384",
    )
    stores.memories.add(m)
    assert stores.memories.get(TEAM_A, m.id) == m


def test_a_superseded_memory_round_trips_its_validity_fields(stores):
    m = memory(valid_to=BASE + timedelta(days=2), superseded_by="mem_newer", scope=Scope.TEAM, project=None)
    stores.memories.add(m)
    assert stores.memories.get(TEAM_A, m.id) == m


def test_adding_a_memory_whose_id_exists_raises_conflict(stores):
    m = memory()
    stores.memories.add(m)
    with pytest.raises(Conflict):
        stores.memories.add(replace(m, content="other"))
    assert stores.memories.get(TEAM_A, m.id) == m


def test_getting_an_unknown_memory_returns_none(stores):
    assert stores.memories.get(TEAM_A, new_id("mem")) is None


def test_put_replaces_an_existing_memory(stores):
    m = memory(tags=("a",))
    stores.memories.add(m)
    changed = replace(m, content="new", tags=("b", "c"), pinned=True, updated_at=BASE + timedelta(days=1))
    stores.memories.put(changed)
    assert stores.memories.get(TEAM_A, m.id) == changed


def test_put_of_an_unknown_memory_raises_not_found(stores):
    with pytest.raises(NotFound):
        stores.memories.put(memory())


def test_put_changes_what_filters_see(stores):
    m = memory(project="proj-1")
    stores.memories.add(m)
    stores.memories.put(replace(m, project="proj-2", superseded_by="mem_x"))
    assert stores.memories.list(TEAM_A, MemoryFilter(project="proj-1")).items == ()
    assert ids(stores.memories.list(TEAM_A, MemoryFilter(include_superseded=True)).items) == [m.id]


def test_get_many_returns_the_known_ids_and_skips_unknown_ones(stores):
    a, b, c = memory(), memory(), memory()
    for m in (a, b, c):
        stores.memories.add(m)
    found = stores.memories.get_many(TEAM_A, [a.id, c.id, new_id("mem")])
    assert found == {a.id: a, c.id: c}
    assert stores.memories.get_many(TEAM_A, []) == {}


def test_deleting_a_memory_removes_it_and_reports_whether_it_existed(stores):
    m = memory()
    stores.memories.add(m)
    assert stores.memories.delete(TEAM_A, m.id) is True
    assert stores.memories.get(TEAM_A, m.id) is None
    assert stores.memories.delete(TEAM_A, m.id) is False


def test_deleting_a_memory_removes_its_relations_in_both_directions(stores):
    a, b, c = memory(), memory(), memory()
    for m in (a, b, c):
        stores.memories.add(m)
    out_rel = Relation(id=new_id("rel"), team_id=TEAM_A, source_id=a.id, predicate="uses", target_id=b.id)
    in_rel = Relation(id=new_id("rel"), team_id=TEAM_A, source_id=c.id, predicate="fixes", target_id=a.id)
    other = Relation(id=new_id("rel"), team_id=TEAM_A, source_id=b.id, predicate="relates-to", target_id=c.id)
    for r in (out_rel, in_rel, other):
        stores.relations.add(r)

    stores.memories.delete(TEAM_A, a.id)

    assert stores.relations.get(TEAM_A, out_rel.id) is None
    assert stores.relations.get(TEAM_A, in_rel.id) is None
    assert stores.relations.for_memory(TEAM_A, a.id) == []
    assert stores.relations.get(TEAM_A, other.id) == other


def test_iter_team_yields_every_memory_including_superseded_and_personal_ones(stores):
    ms = [
        memory(minute=1),
        memory(minute=2, superseded_by="mem_x"),
        memory(minute=3, scope=Scope.PERSONAL, owner="bob"),
        memory(minute=4, scope=Scope.TEAM, project=None),
    ]
    for m in ms:
        stores.memories.add(m)
    assert sorted(ids(stores.memories.iter_team(TEAM_A))) == sorted(ids(ms))


# --- find_by_hash and record_access -------------------------------------------------------------


def test_find_by_hash_finds_the_current_memory_in_the_project(stores):
    m = memory(project="proj-1", content="Use uv")
    stores.memories.add(m)
    assert stores.memories.find_by_hash(TEAM_A, "proj-1", m.content_hash) == m
    assert stores.memories.find_by_hash(TEAM_A, "proj-2", m.content_hash) is None
    assert stores.memories.find_by_hash(TEAM_A, "proj-1", "0" * 64) is None


def test_find_by_hash_ignores_superseded_and_expired_memories(stores):
    old = memory(content="same", superseded_by="mem_new")
    expired = memory(content="same", valid_to=BASE)
    stores.memories.add(old)
    stores.memories.add(expired)
    assert stores.memories.find_by_hash(TEAM_A, "proj-1", old.content_hash) is None
    current = memory(content="same")
    stores.memories.add(current)
    assert stores.memories.find_by_hash(TEAM_A, "proj-1", old.content_hash) == current


def test_find_by_hash_without_a_project_finds_team_scope_memories(stores):
    team_wide = memory(scope=Scope.TEAM, project=None, content="team rule")
    stores.memories.add(team_wide)
    assert stores.memories.find_by_hash(TEAM_A, None, team_wide.content_hash) == team_wide


def test_record_access_bumps_the_count_and_last_access_time(stores):
    m = memory(access_count=2)
    stores.memories.add(m)
    first, second = BASE + timedelta(days=1), BASE + timedelta(days=2)
    stores.memories.record_access(TEAM_A, [m.id, new_id("mem")], first)
    stores.memories.record_access(TEAM_A, [m.id], second)
    got = stores.memories.get(TEAM_A, m.id)
    assert got is not None
    assert (got.access_count, got.last_accessed_at) == (4, second)
    assert replace(got, access_count=2, last_accessed_at=None) == m


# --- filters ------------------------------------------------------------------------------------


@pytest.fixture
def catalogue(stores) -> dict[str, Memory]:
    """One team's memories across projects, scopes, owners, kinds, tags, sessions and validity."""
    ms = {
        "proj": memory(minute=1, tags=("db",), provenance=Provenance(session_id="ses-1")),
        "other_project": memory(minute=2, project="proj-2"),
        "team": memory(
            minute=3, scope=Scope.TEAM, project=None, kind=MemoryKind.PATTERN, tags=("db", "perf")
        ),
        "alice": memory(minute=4, scope=Scope.PERSONAL, owner="alice", kind=MemoryKind.PREFERENCE),
        "bob": memory(minute=5, scope=Scope.PERSONAL, owner="bob", kind=MemoryKind.PREFERENCE),
        "superseded": memory(minute=6, kind=MemoryKind.DECISION, superseded_by="mem_x"),
        "expired": memory(minute=7, valid_to=BASE),
        "episode": memory(
            minute=8, kind=MemoryKind.EPISODE, tags=("perf",), provenance=Provenance(session_id="ses-2")
        ),
        "ownerless_personal": memory(minute=9, scope=Scope.PERSONAL, owner=None, project="proj-2"),
    }
    for m in ms.values():
        stores.memories.add(m)
    return ms


def names(catalogue: dict[str, Memory], memories) -> set[str]:
    by_id = {m.id: name for name, m in catalogue.items()}
    return {by_id[m.id] for m in memories}


def listed(stores, catalogue, **flt) -> set[str]:
    return names(catalogue, list_all(stores.memories, TEAM_A, MemoryFilter(**flt)))


def test_a_project_listing_includes_team_scope_memories(stores, catalogue):
    assert listed(stores, catalogue, project="proj-1", member="alice") == {"proj", "team", "alice", "episode"}


def test_a_project_listing_can_exclude_team_scope_memories(stores, catalogue):
    got = listed(stores, catalogue, project="proj-1", include_team_scope=False, member="alice")
    assert got == {"proj", "alice", "episode"}


def test_personal_memories_are_listed_only_for_their_owner(stores, catalogue):
    assert {"alice"} == listed(stores, catalogue, member="alice") & {"alice", "bob"}
    assert {"bob"} == listed(stores, catalogue, member="bob") & {"alice", "bob"}
    assert listed(stores, catalogue, member="carol") & {"alice", "bob"} == set()


def test_kind_filter_keeps_only_those_kinds(stores, catalogue):
    kinds = frozenset({MemoryKind.PATTERN, MemoryKind.EPISODE})
    assert listed(stores, catalogue, kinds=kinds) == {"team", "episode"}


def test_scope_filter_keeps_only_those_scopes(stores, catalogue):
    assert listed(stores, catalogue, scopes=frozenset({Scope.TEAM})) == {"team"}
    assert listed(stores, catalogue, scopes=frozenset({Scope.PERSONAL}), member="bob") == {"bob"}


def test_tag_filter_keeps_memories_with_any_of_the_tags(stores, catalogue):
    assert listed(stores, catalogue, tags=frozenset({"perf"})) == {"team", "episode"}
    assert listed(stores, catalogue, tags=frozenset({"db", "absent"})) == {"proj", "team"}


def test_session_filter_keeps_memories_learned_in_that_session(stores, catalogue):
    assert listed(stores, catalogue, session_id="ses-2") == {"episode"}


def test_superseded_and_expired_memories_are_excluded_unless_asked_for(stores, catalogue):
    assert listed(stores, catalogue) & {"superseded", "expired"} == set()
    assert listed(stores, catalogue, include_superseded=True) >= {"superseded", "expired"}


def test_listing_agrees_with_memory_filter_admits_across_filter_combinations(stores, catalogue):
    options = itertools.product(
        [None, "proj-1", "proj-2"],
        [True, False],
        [None, "alice"],
        [False, True],
        [None, frozenset(), frozenset({MemoryKind.FACT}), frozenset({MemoryKind.FACT, MemoryKind.PATTERN})],
        [None, frozenset({Scope.PERSONAL}), frozenset({Scope.PROJECT, Scope.TEAM})],
        [None, frozenset({"perf"})],
        [None, "ses-1"],
        [None, frozenset({"proj-2"}), frozenset({"proj-1", "proj-9"})],
    )
    everything = sorted(catalogue.values(), key=lambda m: (m.created_at, m.id), reverse=True)
    # a fixed sample keeps the suite fast over slower backends while still mixing every option
    for combo in random.Random(20250301).sample(list(options), 60):
        project, team_scope, member, superseded, kinds, scopes, tags, session, projects = combo
        flt = MemoryFilter(
            project=project,
            include_team_scope=team_scope,
            member=member,
            include_superseded=superseded,
            kinds=kinds,
            scopes=scopes,
            tags=tags,
            session_id=session,
            projects=projects,
        )
        expected = [m.id for m in everything if flt.admits(m)]
        assert ids(list_all(stores.memories, TEAM_A, flt, limit=4)) == expected, flt


# --- ordering and pagination --------------------------------------------------------------------


def test_listing_is_newest_first_with_ties_broken_by_id_descending(stores):
    tied = [memory(minute=5) for _ in range(3)]
    older, newer = memory(minute=1), memory(minute=9)
    for m in (*tied, older, newer):
        stores.memories.add(m)
    expected = [newer.id, *sorted(ids(tied), reverse=True), older.id]
    assert ids(stores.memories.list(TEAM_A, MemoryFilter()).items) == expected


def test_pagination_walks_every_memory_once_over_several_pages(stores):
    ms = [memory(minute=i % 4) for i in range(11)]  # repeated timestamps straddle page boundaries
    for m in ms:
        stores.memories.add(m)
    first = stores.memories.list(TEAM_A, MemoryFilter(), limit=3)
    assert len(first.items) == 3 and first.next_cursor is not None
    walked = list_all(stores.memories, TEAM_A, MemoryFilter(), limit=3)
    expected = sorted(ms, key=lambda m: (m.created_at, m.id), reverse=True)
    assert ids(walked) == ids(expected)


def test_a_page_that_ends_the_listing_has_no_cursor(stores):
    for i in range(2):
        stores.memories.add(memory(minute=i))
    assert stores.memories.list(TEAM_A, MemoryFilter(), limit=5).next_cursor is None
    assert stores.memories.list(TEAM_A, MemoryFilter(), limit=1).next_cursor is not None


def test_a_memory_added_between_pages_does_not_shift_the_rest_of_the_listing(stores):
    ms = [memory(minute=i) for i in range(6)]
    for m in ms:
        stores.memories.add(m)
    first = stores.memories.list(TEAM_A, MemoryFilter(), limit=2)
    stores.memories.add(memory(minute=100))
    rest = []
    cursor = first.next_cursor
    while cursor is not None:
        page = stores.memories.list(TEAM_A, MemoryFilter(), limit=2, cursor=cursor)
        rest.extend(page.items)
        cursor = page.next_cursor
    assert ids(first.items) + ids(rest) == [m.id for m in reversed(ms)]


def test_pagination_with_a_filter_is_complete(stores):
    wanted = [memory(minute=i, kind=MemoryKind.DECISION) for i in range(7)]
    for i, m in enumerate(wanted):
        stores.memories.add(m)
        stores.memories.add(memory(minute=i))  # interleaved noise the filter must skip
    flt = MemoryFilter(kinds=frozenset({MemoryKind.DECISION}))
    assert ids(list_all(stores.memories, TEAM_A, flt, limit=3)) == [m.id for m in reversed(wanted)]


def test_a_malformed_cursor_is_invalid_input(stores):
    stores.memories.add(memory())
    with pytest.raises(InvalidInput):
        stores.memories.list(TEAM_A, MemoryFilter(), cursor="not a cursor!")


# --- team isolation -----------------------------------------------------------------------------


@pytest.fixture
def team_a_memory(stores) -> Memory:
    m = memory(scope=Scope.TEAM, project=None, content="team a secret")
    stores.memories.add(m)
    return m


def test_another_team_cannot_get_a_memory(stores, team_a_memory):
    assert stores.memories.get(TEAM_B, team_a_memory.id) is None
    assert stores.memories.get_many(TEAM_B, [team_a_memory.id]) == {}


def test_another_team_cannot_list_a_memory(stores, team_a_memory):
    everything = MemoryFilter(include_superseded=True)
    assert stores.memories.list(TEAM_B, everything).items == ()
    assert list(stores.memories.iter_team(TEAM_B)) == []


def test_put_with_another_team_raises_not_found_and_changes_nothing(stores, team_a_memory):
    with pytest.raises(NotFound):
        stores.memories.put(replace(team_a_memory, team_id=TEAM_B, content="hijacked"))
    assert stores.memories.get(TEAM_A, team_a_memory.id) == team_a_memory
    assert stores.memories.get(TEAM_B, team_a_memory.id) is None


def test_another_team_cannot_delete_a_memory(stores, team_a_memory):
    assert stores.memories.delete(TEAM_B, team_a_memory.id) is False
    assert stores.memories.get(TEAM_A, team_a_memory.id) == team_a_memory


def test_another_team_cannot_delete_a_memorys_relations(stores, team_a_memory):
    other = memory()
    stores.memories.add(other)
    rel = Relation(
        id=new_id("rel"), team_id=TEAM_A, source_id=team_a_memory.id, predicate="uses", target_id=other.id
    )
    stores.relations.add(rel)
    stores.memories.delete(TEAM_B, team_a_memory.id)
    assert stores.relations.get(TEAM_A, rel.id) == rel


def test_another_team_cannot_find_a_memory_by_hash(stores, team_a_memory):
    assert stores.memories.find_by_hash(TEAM_B, None, team_a_memory.content_hash) is None


def test_another_team_cannot_record_access_to_a_memory(stores, team_a_memory):
    stores.memories.record_access(TEAM_B, [team_a_memory.id], BASE)
    assert stores.memories.get(TEAM_A, team_a_memory.id) == team_a_memory


# --- handing a handoff over once --------------------------------------------------------------------
def _delivered(m: Memory, to: str) -> Memory:
    return replace(m, details={**m.details, "delivered_at": BASE.isoformat(), "delivered_to": to})


def test_a_handoff_is_delivered_by_the_first_conditional_write_only(stores):
    repo = stores.memories
    handoff = memory(kind=MemoryKind.HANDOFF, details={"agent": "codex"})
    repo.add(handoff)

    assert repo.put_if_undelivered(_delivered(handoff, "first")) is True
    assert repo.put_if_undelivered(_delivered(handoff, "second")) is False
    assert repo.get(TEAM_A, handoff.id).details["delivered_to"] == "first"
    # a plain replace of the delivered memory keeps it delivered
    repo.put(replace(repo.get(TEAM_A, handoff.id), title="renamed"))
    assert repo.put_if_undelivered(_delivered(handoff, "third")) is False


def test_a_missing_memory_is_not_delivered(stores):
    assert stores.memories.put_if_undelivered(_delivered(memory(kind=MemoryKind.HANDOFF), "x")) is False


def test_concurrent_deliveries_of_one_handoff_have_exactly_one_winner(stores):
    import threading

    repo = stores.memories
    handoff = memory(kind=MemoryKind.HANDOFF, details={"agent": "claude-code"})
    repo.add(handoff)
    racers = 6
    barrier = threading.Barrier(racers)
    wins: list[str] = []

    def start_session(name: str) -> None:
        seen = repo.get(TEAM_A, handoff.id)  # each reads it undelivered, then races to take it
        barrier.wait()
        if repo.put_if_undelivered(_delivered(seen, name)):
            wins.append(name)

    threads = [threading.Thread(target=start_session, args=(f"s{i}",)) for i in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(wins) == 1
    assert repo.get(TEAM_A, handoff.id).details["delivered_to"] == wins[0]


def test_counts_agree_with_what_list_admits_by_project_scope_and_kind(stores):
    repo = stores.memories
    mine = [
        memory(minute=1, kind=MemoryKind.FACT),
        memory(minute=2, kind=MemoryKind.FACT),
        memory(minute=3, kind=MemoryKind.DECISION, project="proj-2"),
        memory(minute=4, kind=MemoryKind.PREFERENCE, scope=Scope.TEAM, project=None),
        memory(minute=5, kind=MemoryKind.FACT, scope=Scope.PERSONAL, owner="alice"),
        memory(minute=6, kind=MemoryKind.FACT, scope=Scope.PERSONAL, owner="bob"),
        memory(minute=7, kind=MemoryKind.FACT, valid_to=BASE, superseded_by="mem_x"),
        memory(TEAM_B, minute=8, kind=MemoryKind.FACT),
    ]
    for m in mine:
        repo.add(m)
    for flt in (MemoryFilter(member="alice"), MemoryFilter(member="alice", project="proj-1")):
        listed: dict[tuple, int] = {}
        for m in list_all(repo, TEAM_A, flt):
            key = (m.project, m.scope, m.kind)
            listed[key] = listed.get(key, 0) + 1
        counted = {(c.project, c.scope, c.kind): c.count for c in repo.counts(TEAM_A, flt)}
        assert counted == listed
    alice = {(c.project, c.scope, c.kind): c.count for c in repo.counts(TEAM_A, MemoryFilter(member="alice"))}
    assert alice[("proj-1", Scope.PROJECT, MemoryKind.FACT)] == 2
    assert alice[("proj-1", Scope.PERSONAL, MemoryKind.FACT)] == 1  # bob's personal one is not hers


def _scan_counts(repo, team_id: str, flt: MemoryFilter) -> dict[tuple, int]:
    listed: dict[tuple, int] = {}
    for m in list_all(repo, team_id, flt, limit=100):
        key = (m.project, m.scope, m.kind)
        listed[key] = listed.get(key, 0) + 1
    return listed


def test_counts_kept_on_write_equal_a_scan_after_adds_supersedes_forgets_moves_and_deletes(stores):
    repo = stores.memories
    assert repo.counts(TEAM_A, MemoryFilter(member="alice")) == []  # counters exist from the first read on
    rng = random.Random(7)
    kinds = [MemoryKind.FACT, MemoryKind.DECISION, MemoryKind.PREFERENCE]
    live: list[Memory] = []
    for n in range(40):
        scope = rng.choice([Scope.PROJECT, Scope.PROJECT, Scope.TEAM, Scope.PERSONAL])
        m = memory(
            minute=n,
            kind=rng.choice(kinds),
            scope=scope,
            project=None if scope is Scope.TEAM else rng.choice(["proj-1", "proj-2"]),
            owner=rng.choice(["alice", "bob"]) if scope is Scope.PERSONAL else None,
        )
        repo.add(m)
        live.append(m)
    repo.add(memory(TEAM_B, minute=1))
    for n, old in enumerate(live[:6]):  # supersedes: the old one closed, its replacement current
        new = memory(minute=100 + n, kind=old.kind, scope=old.scope, project=old.project, owner=old.owner)
        closed = replace(old, superseded_by=new.id, valid_to=new.created_at)
        if hasattr(repo, "supersede"):
            at = new.created_at
            link = Relation(new_id("rel"), TEAM_A, new.id, "supersedes", old.id, at, at)
            repo.supersede(closed, new, link)
        else:
            repo.put(closed)
            repo.add(new)
    for old in live[6:10]:  # forgets close a memory in place
        repo.put(replace(old, valid_to=BASE + timedelta(days=1)))
    for old in live[10:13]:  # edits that move a memory to another kind and project
        repo.put(replace(old, kind=MemoryKind.DECISION, project="proj-3", scope=Scope.PROJECT, owner=None))
    for old in live[13:17]:
        assert repo.delete(TEAM_A, old.id)
    repo.put(live[20])  # a put that changes nothing counted
    for flt in (
        MemoryFilter(member="alice"),
        MemoryFilter(member="bob", project="proj-1"),
        MemoryFilter(member="alice", project="proj-3", include_team_scope=False),
        MemoryFilter(member="bob", kinds=frozenset({MemoryKind.DECISION})),
        MemoryFilter(member="alice", projects=frozenset({"proj-2"})),  # a key limited to projects
    ):
        counted = {(c.project, c.scope, c.kind): c.count for c in repo.counts(TEAM_A, flt)}
        assert counted == _scan_counts(repo, TEAM_A, flt), flt
    assert sum(c.count for c in repo.counts(TEAM_B, MemoryFilter())) == 1


# --- embedding_version stamps -------------------------------------------------------------------


def test_every_memory_of_a_team_is_stamped_with_its_vectors_model_and_counted_by_model(stores):
    from cairn.domain.ports import EmbeddingStamps

    repo = stores.memories
    assert isinstance(repo, EmbeddingStamps)
    old = memory(embedding_version="model-old")
    fresh = [memory(minute=n) for n in range(1, 4)]
    other = memory(TEAM_B)
    for m in (old, *fresh, other):
        repo.add(m)
    assert repo.embedding_versions(TEAM_A) == {"model-old": 1, None: 3}
    assert repo.get(TEAM_A, old.id).embedding_version == "model-old"

    assert repo.stamp_embedding_version(TEAM_A, "model-new") == 4
    assert repo.embedding_versions(TEAM_A) == {"model-new": 4}
    assert repo.get(TEAM_A, fresh[0].id).embedding_version == "model-new"
    assert repo.embedding_versions(TEAM_B) == {None: 1}  # another team is not stamped
    assert repo.stamp_embedding_version(TEAM_A, "model-new") == 0  # already stamped: nothing written
    # a later write of the memory keeps its stamp and its other fields
    repo.put(replace(repo.get(TEAM_A, fresh[1].id), content="changed"))
    changed = repo.get(TEAM_A, fresh[1].id)
    assert (changed.content, changed.embedding_version) == ("changed", "model-new")

"""MemoryFilter.admits, the one definition every store's filtering must agree with, and codec round trips."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from cairn.domain import codec
from cairn.domain.errors import InvalidInput
from cairn.domain.models import (
    ApiKey,
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Provenance,
    Relation,
    Scope,
    Session,
    Team,
)

pytestmark = pytest.mark.unit

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def mem(**fields) -> Memory:
    fields.setdefault("id", "mem_1")
    fields.setdefault("team_id", "team-a")
    fields.setdefault("kind", MemoryKind.FACT)
    fields.setdefault("content", "c")
    fields.setdefault("project", "proj-1")
    return Memory(**fields)


# --- MemoryFilter.admits ------------------------------------------------------------------------


def test_an_empty_filter_admits_current_non_personal_memories():
    assert MemoryFilter().admits(mem())
    assert MemoryFilter().admits(mem(scope=Scope.TEAM, project=None))


def test_superseded_or_expired_memories_are_admitted_only_on_request():
    for old in (mem(superseded_by="mem_2"), mem(valid_to=T0)):
        assert not MemoryFilter().admits(old)
        assert MemoryFilter(include_superseded=True).admits(old)


def test_a_project_filter_admits_team_scope_memories_unless_told_not_to():
    team_wide = mem(scope=Scope.TEAM, project=None)
    assert MemoryFilter(project="proj-1").admits(team_wide)
    assert not MemoryFilter(project="proj-1", include_team_scope=False).admits(team_wide)


def test_a_project_filter_rejects_other_projects():
    assert not MemoryFilter(project="proj-2").admits(mem())
    assert MemoryFilter(project="proj-1", include_team_scope=False).admits(mem())


def test_personal_memories_are_admitted_only_for_their_owner():
    personal = mem(scope=Scope.PERSONAL, owner="alice")
    assert MemoryFilter(member="alice").admits(personal)
    assert not MemoryFilter(member="bob").admits(personal)
    assert not MemoryFilter().admits(personal)


def test_a_personal_memory_without_owner_is_admitted_only_without_a_member():
    # the edge stores must reproduce: admits compares owner and member with !=, so None matches None
    ownerless = mem(scope=Scope.PERSONAL, owner=None)
    assert MemoryFilter().admits(ownerless)
    assert not MemoryFilter(member="alice").admits(ownerless)


def test_kind_and_scope_filters_admit_members_of_the_set_and_empty_sets_admit_all():
    assert MemoryFilter(kinds=frozenset({MemoryKind.FACT, MemoryKind.PATTERN})).admits(mem())
    assert not MemoryFilter(kinds=frozenset({MemoryKind.PATTERN})).admits(mem())
    assert MemoryFilter(kinds=frozenset()).admits(mem())
    assert not MemoryFilter(scopes=frozenset({Scope.TEAM})).admits(mem())
    assert MemoryFilter(scopes=frozenset()).admits(mem())


def test_a_tag_filter_admits_memories_with_any_of_the_tags():
    tagged = mem(tags=("db", "perf"))
    assert MemoryFilter(tags=frozenset({"perf", "absent"})).admits(tagged)
    assert not MemoryFilter(tags=frozenset({"absent"})).admits(tagged)
    assert not MemoryFilter(tags=frozenset({"db"})).admits(mem())


def test_a_session_filter_admits_memories_learned_in_that_session():
    learned = mem(provenance=Provenance(session_id="ses-1"))
    assert MemoryFilter(session_id="ses-1").admits(learned)
    assert not MemoryFilter(session_id="ses-2").admits(learned)
    assert not MemoryFilter(session_id="ses-1").admits(mem())


# --- codec round trips --------------------------------------------------------------------------


def full_memory() -> Memory:
    return Memory(
        id="mem_1",
        team_id="team-a",
        kind=MemoryKind.DECISION,
        content="Use Postgres — not MySQL",
        scope=Scope.PERSONAL,
        project="github.com/acme/api",
        owner="alice",
        title="DB choice",
        tags=("db", "arch"),
        pinned=True,
        confidence=0.9,
        details={"rationale": "JSONB", "alternatives": ["mysql", "sqlite"], "n": {"x": None}},
        provenance=Provenance("ses-1", "teams/a/t.jsonl", 3, 9, "claude"),
        valid_from=T0,
        valid_to=T0 + timedelta(days=1),
        superseded_by="mem_2",
        created_at=T0 + timedelta(microseconds=1),
        updated_at=T0 + timedelta(hours=1),
        access_count=3,
        last_accessed_at=T0 + timedelta(hours=2),
        content_hash="ab" * 32,
        embedding_version="v1",
    )


ROUND_TRIPS = [
    pytest.param(full_memory(), codec.encode_memory, codec.decode_memory, id="memory"),
    pytest.param(
        Relation("rel_1", "team-a", "mem_1", "uses", "mem_2", T0, T0, T0 + timedelta(days=1), 0.5),
        codec.encode_relation,
        codec.decode_relation,
        id="relation",
    ),
    pytest.param(
        Session("ses_1", "team-a", None, "codex", "bob", T0, None, ("k1", "k2"), "failed", {"e": [1]}, T0),
        codec.encode_session,
        codec.decode_session,
        id="session",
    ),
    pytest.param(Team("team-a", "Acme", T0), codec.encode_team, codec.decode_team, id="team"),
    pytest.param(
        ApiKey("key_1", "team-a", "alice", "ci", "h" * 64, "cairn_ab", frozenset(KeyScope), T0, T0, None, T0),
        codec.encode_key,
        codec.decode_key,
        id="api-key",
    ),
]


@pytest.mark.parametrize(("obj", "encode", "decode"), ROUND_TRIPS)
def test_decoding_the_json_text_of_an_encoded_object_gives_the_object_back(obj, encode, decode):
    assert decode(json.loads(json.dumps(encode(obj)))) == obj


@pytest.mark.parametrize(("obj", "encode", "decode"), ROUND_TRIPS)
def test_a_record_with_a_missing_or_unknown_field_is_invalid_input(obj, encode, decode):
    record = encode(obj)
    with pytest.raises(InvalidInput):
        decode({**record, "surprise": 1})
    with pytest.raises(InvalidInput):
        decode({k: v for k, v in record.items() if k != "id"})


def test_a_memory_record_with_a_bad_enum_value_is_invalid_input():
    with pytest.raises(InvalidInput):
        codec.decode_memory({**codec.encode_memory(full_memory()), "kind": "gossip"})


def test_datetimes_are_encoded_in_utc_and_naive_ones_are_read_as_utc():
    plus_two = T0.astimezone(timezone(timedelta(hours=2)))
    assert codec.dt_out(plus_two) == "2025-03-01T12:00:00+00:00"
    assert codec.dt_in("2025-03-01T12:00:00") == T0
    assert codec.dt_out(None) is None and codec.dt_in(None) is None


def test_key_scopes_are_encoded_as_a_sorted_list():
    key = ApiKey("key_1", "t", "m", "n", "h", "p", frozenset({KeyScope.WRITE, KeyScope.ADMIN}), T0)
    assert codec.encode_key(key)["scopes"] == ["admin", "write"]
    assert codec.decode_key(codec.encode_key(replace(key, scopes=frozenset()))).scopes == frozenset()


def test_the_index_reads_a_memory_by_title_content_and_tags_but_an_excerpt_by_its_own_words():
    decision = mem(kind=MemoryKind.DECISION, title="Use pnpm", content="We use pnpm.", tags=("tooling",))
    assert decision.search_text() == "Use pnpm\nWe use pnpm.\ntooling"
    # every excerpt of a long step carries the step's request as its title: indexed, it would make
    # all of them match whatever matches the request
    excerpt = mem(kind=MemoryKind.EXCERPT, title="step: Tidy every module", content="$ ruff format a.py")
    assert excerpt.search_text() == "$ ruff format a.py"

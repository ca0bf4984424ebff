"""Contract of RelationRepository, run over every registered `stores` adapter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.errors import Conflict
from cairn.domain.ids import new_id
from cairn.domain.models import Relation

pytestmark = pytest.mark.contract

TEAM_A = "team-a"
TEAM_B = "team-b"
BASE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def relation(source_id: str, target_id: str, team_id: str = TEAM_A, **fields) -> Relation:
    return Relation(
        id=fields.pop("id", new_id("rel")),
        team_id=team_id,
        source_id=source_id,
        predicate=fields.pop("predicate", "relates-to"),
        target_id=target_id,
        **fields,
    )


def test_a_relation_read_back_equals_the_relation_stored_in_every_field(stores):
    r = Relation(
        id=new_id("rel"),
        team_id=TEAM_A,
        source_id="mem_a",
        predicate="caused-by",
        target_id="mem_b",
        created_at=BASE + timedelta(microseconds=5),
        valid_from=BASE - timedelta(days=3),
        valid_to=BASE + timedelta(days=3),
        weight=0.25,
    )
    stores.relations.add(r)
    assert stores.relations.get(TEAM_A, r.id) == r


def test_adding_a_relation_whose_id_exists_raises_conflict(stores):
    r = relation("mem_a", "mem_b")
    stores.relations.add(r)
    with pytest.raises(Conflict):
        stores.relations.add(relation("mem_c", "mem_d", id=r.id))
    assert stores.relations.get(TEAM_A, r.id) == r


def test_relations_of_a_memory_are_found_by_direction(stores):
    out_rel = relation("mem_a", "mem_b", predicate="uses")
    in_rel = relation("mem_c", "mem_a", predicate="fixes")
    unrelated = relation("mem_b", "mem_c")
    for r in (out_rel, in_rel, unrelated):
        stores.relations.add(r)
    assert stores.relations.for_memory(TEAM_A, "mem_a", "out") == [out_rel]
    assert stores.relations.for_memory(TEAM_A, "mem_a", "in") == [in_rel]
    both = stores.relations.for_memory(TEAM_A, "mem_a")
    assert sorted(both, key=lambda r: r.id) == sorted([out_rel, in_rel], key=lambda r: r.id)


def test_a_self_relation_is_listed_once(stores):
    loop = relation("mem_a", "mem_a")
    stores.relations.add(loop)
    assert stores.relations.for_memory(TEAM_A, "mem_a", "both") == [loop]


def test_deleting_a_relation_removes_it_and_reports_whether_it_existed(stores):
    r = relation("mem_a", "mem_b")
    stores.relations.add(r)
    assert stores.relations.delete(TEAM_A, r.id) is True
    assert stores.relations.get(TEAM_A, r.id) is None
    assert stores.relations.for_memory(TEAM_A, "mem_a") == []
    assert stores.relations.delete(TEAM_A, r.id) is False


def test_iter_team_yields_every_relation_of_the_team(stores):
    rs = [relation(f"mem_{i}", f"mem_{i + 1}") for i in range(5)]
    for r in rs:
        stores.relations.add(r)
    stores.relations.add(relation("mem_x", "mem_y", team_id=TEAM_B))
    assert sorted(r.id for r in stores.relations.iter_team(TEAM_A)) == sorted(r.id for r in rs)


@pytest.fixture
def team_a_relation(stores) -> Relation:
    r = relation("mem_a", "mem_b")
    stores.relations.add(r)
    return r


def test_another_team_cannot_get_a_relation(stores, team_a_relation):
    assert stores.relations.get(TEAM_B, team_a_relation.id) is None


def test_another_team_cannot_see_a_memorys_relations(stores, team_a_relation):
    for direction in ("in", "out", "both"):
        assert stores.relations.for_memory(TEAM_B, "mem_a", direction) == []
        assert stores.relations.for_memory(TEAM_B, "mem_b", direction) == []
    assert list(stores.relations.iter_team(TEAM_B)) == []


def test_another_team_cannot_delete_a_relation(stores, team_a_relation):
    assert stores.relations.delete(TEAM_B, team_a_relation.id) is False
    assert stores.relations.get(TEAM_A, team_a_relation.id) == team_a_relation

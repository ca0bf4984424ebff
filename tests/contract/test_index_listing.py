"""The ListableIndex contract, over every search index: it lists exactly the team's indexed memories
with whether each is indexed as current, so a reindex can run in place and drift can be found anywhere."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from cairn.domain.models import IndexedMemory, Memory, MemoryKind

pytestmark = pytest.mark.contract


def _doc(memory_id: str, team: str = "team_a", current: bool = True) -> IndexedMemory:
    text = f"fact {memory_id}"
    memory = Memory(id=memory_id, team_id=team, kind=MemoryKind.FACT, content=text, project="p")
    if not current:
        memory = replace(memory, superseded_by="mem_new", valid_to=datetime.now(UTC))
    return IndexedMemory(memory=memory, vector=None)


def test_an_index_lists_each_of_a_teams_memories_once_with_whether_it_is_current(search_index):
    search_index.upsert([_doc("mem_1"), _doc("mem_2", current=False), _doc("mem_3", team="team_b")])
    search_index.upsert([_doc("mem_1")])  # upserting again is still one document
    assert search_index.indexed("team_a") == {"mem_1": True, "mem_2": False}
    search_index.remove("team_a", ["mem_1"])
    assert search_index.indexed("team_a") == {"mem_2": False}
    assert search_index.indexed("team_nobody") == {}


def test_more_memories_than_one_page_are_all_listed(search_index):
    search_index.upsert([_doc(f"mem_{i:05d}") for i in range(1_234)])
    listed = search_index.indexed("team_a")
    assert len(listed) == 1_234 and all(listed.values())

"""The IndexAudit contract: it names exactly the memories the index lacks, the entries whose memory is
gone, and the entries whose current/superseded state is out of date; an index in step reports nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cairn.domain.models import IndexedMemory, Memory, MemoryKind

pytestmark = pytest.mark.contract


def _memory(memory_id: str, team: str = "team_a") -> Memory:
    return Memory(id=memory_id, team_id=team, kind=MemoryKind.FACT, content=f"fact {memory_id}", project="p")


def test_an_index_in_step_with_the_memories_has_no_drift(index_audit):
    audit, memories, index = index_audit
    kept = [_memory("mem_1"), _memory("mem_2")]
    for m in kept:
        memories.add(m)
    index.upsert([IndexedMemory(memory=m, vector=(1.0, 0.0)) for m in kept])
    assert audit.drift("team_a").total == 0


def test_missing_orphaned_and_stale_entries_are_each_named(index_audit):
    audit, memories, index = index_audit
    unindexed, current, superseded = _memory("mem_1"), _memory("mem_2"), _memory("mem_3")
    for m in (unindexed, current, superseded):
        memories.add(m)
    index.upsert([IndexedMemory(memory=m, vector=None) for m in (current, superseded, _memory("mem_9"))])
    memories.put(replace(superseded, superseded_by="mem_2"))  # the index still thinks it current
    memories.add(_memory("mem_1", team="team_b"))  # another team's memory is no concern of team_a's
    drift = audit.drift("team_a")
    assert (drift.missing, drift.orphaned, drift.stale) == (("mem_1",), ("mem_9",), ("mem_3",))
    assert audit.drift("team_b").missing == ("mem_1",)

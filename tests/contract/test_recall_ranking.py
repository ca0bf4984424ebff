"""Recall's ranking rules hold over every search index: the engines only hand over candidates, and the
policy in `services/recall.py` ranks them alike in local mode (SQLite) and AWS mode (OpenSearch).

The semantic leg is left out (the embedder is down), so both engines rank by their own BM25 alone and
the rule under test is the only thing that reorders their candidates.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.domain.models import (
    IndexedMemory,
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
)
from cairn.services.recall import RecallService, RecallTuning

pytestmark = pytest.mark.contract

TEAM = "team_recall"
READER = Principal(TEAM, "alice", "key_a", frozenset({KeyScope.READ}))
# one matter across two sessions: left failing in the first, settled in the second
LEFT_OPEN = (
    "m-open",
    "s-monday",
    datetime(2025, 5, 5, tzinfo=UTC),
    "The nightly export job is still failing: its upload step times out. Left failing for the next session.",
)
SETTLED = (
    "m-settled",
    "s-wednesday",
    datetime(2025, 5, 7, tzinfo=UTC),
    "Nightly export job: the failing upload step was given a longer timeout and the job passes.",
)


class DownEmbedder:
    """An embedder that cannot answer: recall keeps the keyword leg, the same in both modes."""

    def embed(self, texts):
        raise RuntimeError("no model here")

    def embed_query(self, text):
        raise RuntimeError("no model here")


@pytest.fixture
def recall(search_index):
    with tempfile.TemporaryDirectory() as tmp:
        db = SqliteDatabase(Path(tmp) / "memories.db")
        memories = SqliteMemoryRepository(db)
        for memory_id, session, when, content in (LEFT_OPEN, SETTLED):
            memory = Memory(
                id=memory_id,
                team_id=TEAM,
                kind=MemoryKind.EPISODE,
                project="proj",
                content=content,
                created_at=when,
                provenance=Provenance(session_id=session),
            )
            memories.add(memory)
            search_index.upsert([IndexedMemory(memory=memory, vector=None)])

        def run(query: str, **tuning) -> list[str]:
            service = RecallService(
                memories,
                search_index,
                DownEmbedder(),
                clock=lambda: datetime(2025, 6, 1, tzinfo=UTC),
                tuning=RecallTuning(**tuning),
                record_access=False,
            )
            return [h.memory.id for h in service.recall(READER, query, MemoryFilter(project="proj")).hits]

        try:
            yield run
        finally:
            db.close()


def test_a_question_about_the_present_gets_the_newer_sessions_account_first(recall):
    query = "Is the nightly export job still failing?"
    assert recall(query, present_decay=1.0)[0] == "m-open"  # the words alone favour the stale account
    assert recall(query)[0] == "m-settled"


def test_asking_where_a_matter_stands_gets_the_newer_sessions_account_first(recall):
    query = "Where do we stand on the nightly export job left failing?"
    assert recall(query, present_decay=1.0)[0] == "m-open"  # the words alone favour the stale account
    assert recall(query)[0] == "m-settled"


def test_a_question_about_what_happened_keeps_the_ranking_of_its_words(recall):
    assert recall("Why was the nightly export job failing, what timed out?")[0] == "m-open"

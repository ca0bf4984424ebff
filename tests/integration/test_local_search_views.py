"""The local index's in-memory views: caught up write by write, they answer as a freshly built one does,
and their BM25 is FTS5's own bm25(search_fts, 1.0, 2.0)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.models import IndexedMemory, Memory, MemoryFilter, MemoryKind, Scope
from cairn.search.analyzer import fts5_match_query, query_terms

pytestmark = pytest.mark.integration

WORDS = [
    *("deploy", "staging", "database", "port", "retry", "timeout", "cache"),
    *("worker", "queue", "invoice", "refund", "ledger", "token"),
]
PROJECTS = ["p1", "p2", "p3"]


def _doc(rng: random.Random, memory_id: str, team: str = "team_a") -> IndexedMemory:
    scope = rng.choice([Scope.PROJECT, Scope.PROJECT, Scope.TEAM])
    vector = np.asarray([rng.gauss(0, 1) for _ in range(8)], dtype=np.float32)
    memory = Memory(
        id=memory_id,
        team_id=team,
        kind=rng.choice([MemoryKind.FACT, MemoryKind.EXCERPT]),
        content=" ".join(rng.choices(WORDS, k=rng.randint(3, 30))),
        scope=scope,
        project=None if scope is Scope.TEAM else rng.choice(PROJECTS),
        title=rng.choice([None, rng.choice(WORDS)]),
    )
    return IndexedMemory(memory=memory, vector=tuple((vector / np.linalg.norm(vector)).tolist()))


def _answers(index: SqliteSearchIndex, rng: random.Random) -> list:
    out = []
    for _ in range(10):
        query = " ".join(rng.sample(WORDS, 3))
        vector = tuple(rng.gauss(0, 1) for _ in range(8))
        flt = MemoryFilter(project=rng.choice([None, *PROJECTS]))
        found = index.search("team_a", query, vector, flt, 20, 20)
        out.append((found.lexical, found.semantic))
    return out


@pytest.mark.parametrize(
    ("merge_min", "segment_rows"),
    [(1_000, 25_000), (0, 25_000), (0, 37)],
    ids=["segments-pile-up", "merged-every-time", "built-in-small-segments"],
)
def test_a_view_caught_up_through_writes_deletes_and_reused_rowids_answers_like_a_fresh_one(
    tmp_path, monkeypatch, merge_min, segment_rows
):
    monkeypatch.setattr("cairn.adapters.local.search._MERGE_MIN", merge_min)
    monkeypatch.setattr("cairn.adapters.local.search._SEGMENT_ROWS", segment_rows)
    db = SqliteDatabase(tmp_path / "s.db")
    live = SqliteSearchIndex(db)
    rng = random.Random(3)
    ids = [f"mem_{i:04d}" for i in range(300)]
    live.upsert([_doc(rng, i) for i in ids[:200]])
    for step in range(25):
        live.search("team_a", "deploy", None, MemoryFilter(), 5, 0)  # keeps its view, catches up
        op = step % 4
        if op == 0:
            live.upsert([_doc(rng, rng.choice(ids)) for _ in range(rng.randint(1, 30))])
        elif op == 1:
            live.remove("team_a", rng.sample(ids, rng.randint(1, 20)))
        elif op == 2:  # the highest rowid deleted, then a new row: SQLite may reuse that rowid
            live.remove("team_a", [ids[-1]])
            live.upsert([_doc(rng, ids[-1])])
        else:
            live.upsert([_doc(rng, f"mem_b{step}", team="team_b")])
        fresh = SqliteSearchIndex(db)
        seed = rng.random()
        assert _answers(live, random.Random(seed)) == _answers(fresh, random.Random(seed))
    db.close()


def test_a_cleared_team_is_empty_and_filled_again_in_a_living_view(tmp_path):
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    rng = random.Random(1)
    index.upsert([_doc(rng, f"mem_{i}") for i in range(50)])
    assert index.search("team_a", "deploy staging", None, MemoryFilter(), 100, 0).lexical
    index.clear_team("team_a")
    assert index.search("team_a", "deploy staging", None, MemoryFilter(), 100, 0).lexical == ()
    index.upsert([_doc(rng, "mem_again")])
    found = index.search("team_a", WORDS[0] + " " + WORDS[1], (1.0,) * 8, MemoryFilter(), 100, 100)
    assert [i for i, _ in found.semantic] == ["mem_again"]
    db.close()


def test_lexical_scores_and_order_are_fts5_bm25s(tmp_path):
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    rng = random.Random(7)
    index.upsert([_doc(rng, f"mem_{i:04d}") for i in range(400)])
    for _ in range(20):
        query = " ".join(rng.sample(WORDS, 4))
        got = index.search("team_a", query, None, MemoryFilter(), 50, 0).lexical
        with db.read() as conn:
            rows = conn.execute(
                "SELECT d.memory_id, bm25(search_fts, 1.0, 2.0) AS s FROM search_fts"
                " CROSS JOIN search_docs d ON d.rowid = search_fts.rowid"
                " WHERE search_fts MATCH ? AND d.team_id = 'team_a' ORDER BY s LIMIT 50",
                (fts5_match_query(query_terms(query)),),
            ).fetchall()
        assert [m for m, _ in got] == [r[0] for r in rows]
        assert [s for _, s in got] == pytest.approx([-r[1] for r in rows], rel=1e-12)
    db.close()


def test_a_local_server_warms_every_teams_view_before_the_first_recall(tmp_path):
    from cairn.bootstrap import build_container
    from cairn.services.memories import NewMemory
    from cairn.settings import Settings

    container = build_container(Settings(mode="local", home=tmp_path / "home"))
    try:
        team, _, secret = container.keys.create_team("alpha", "ops")
        caller = container.keys.authenticate(secret)
        container.memories.remember(caller, NewMemory(MemoryKind.FACT, "the stub is on 9100", project="p"))
        index = container.indexer._index
        assert team.id not in index._views
        container.warm()
        assert team.id in index._views
    finally:
        container.close()

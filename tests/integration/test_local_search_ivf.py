"""A large team's k-NN leg: past a size, the local index scores only the rows of the query's nearest
clusters that the filter admits, and still finds what an exact scan finds."""

from __future__ import annotations

import random

import numpy as np
import pytest
from cairn.adapters.local import search_ivf
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.models import IndexedMemory, Memory, MemoryFilter, MemoryKind, Scope

pytestmark = pytest.mark.integration

DIM = 16
PROJECTS = ["p1", "p2", "p3"]


@pytest.fixture
def small_ivf(monkeypatch):
    """The approximate path at test size: clustered past 600 vectors, exact up to 200 admitted rows."""
    monkeypatch.setattr(search_ivf, "MIN_ROWS", 600)
    monkeypatch.setattr(search_ivf, "EXACT_MAX", 200)
    monkeypatch.setattr(search_ivf, "NLIST", 24)
    monkeypatch.setattr(search_ivf, "NPROBE", 6)
    scored: list[int] = []
    positions = search_ivf.Groups.positions

    def counting(self, lut, runs):
        out = positions(self, lut, runs)
        scored.append(len(out))
        return out

    monkeypatch.setattr(search_ivf.Groups, "positions", counting)
    return scored


def _blobs(rng: np.random.Generator, n: int) -> np.ndarray:
    centres = rng.normal(size=(40, DIM))
    rows = centres[rng.integers(0, len(centres), n)] + rng.normal(scale=0.25, size=(n, DIM))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _docs(vectors: np.ndarray, start: int = 0) -> list[IndexedMemory]:
    rng = random.Random(start)
    docs = []
    for i, vector in enumerate(vectors, start):
        scope = Scope.TEAM if i % 20 == 0 else Scope.PROJECT
        memory = Memory(
            id=f"mem_{i:05d}",
            team_id="team_a",
            kind=MemoryKind.FACT if i % 3 else MemoryKind.EXCERPT,
            content=f"note {i}",
            scope=scope,
            project=None if scope is Scope.TEAM else rng.choice(PROJECTS),
        )
        docs.append(IndexedMemory(memory=memory, vector=tuple(vector.tolist())))
    return docs


def _exact(docs: list[IndexedMemory], query: np.ndarray, flt: MemoryFilter, k: int) -> list[str]:
    admitted = [d for d in docs if flt.admits(d.memory)]
    scores = np.asarray([np.dot(d.vector, query) for d in admitted])
    return [admitted[i].memory.id for i in np.argsort(-scores, kind="stable")[:k]]


def test_a_large_teams_knn_scores_a_fraction_of_its_rows_and_finds_what_an_exact_scan_finds(
    tmp_path, small_ivf
):
    rng = np.random.default_rng(1)
    vectors = _blobs(rng, 1_500)
    docs = _docs(vectors)
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    index.upsert(docs)
    overlap = []
    for i in rng.choice(len(docs), 20, replace=False):
        query = vectors[i] + rng.normal(scale=0.05, size=DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        found = index.search("team_a", "", tuple(query.tolist()), MemoryFilter(), 0, 10).semantic
        assert found[0][0] == _exact(docs, query, MemoryFilter(), 1)[0]
        overlap.append(len({m for m, _ in found} & set(_exact(docs, query, MemoryFilter(), 10))) / 10)
    assert np.mean(overlap) >= 0.9
    assert small_ivf and max(small_ivf) < 0.5 * len(docs)  # each query scored under half the rows
    db.close()


def test_filters_apply_inside_the_clustered_search_and_a_small_filter_is_scanned_exactly(tmp_path, small_ivf):
    rng = np.random.default_rng(2)
    vectors = _blobs(rng, 1_200)
    docs = _docs(vectors)
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    index.upsert(docs)
    by_id = {d.memory.id: d.memory for d in docs}
    wide = MemoryFilter(project="p1")  # ~400 rows with the team's: the clustered path
    narrow = MemoryFilter(project="p2", kinds=frozenset({MemoryKind.EXCERPT}))  # ~130 rows: exact
    for i in rng.choice(len(docs), 10, replace=False):
        query = tuple(vectors[i].tolist())
        for flt in (wide, narrow):
            found = index.search("team_a", "", query, flt, 0, 20).semantic
            assert found and all(flt.admits(by_id[m]) for m, _ in found)
        exact = _exact(docs, np.asarray(query), narrow, 20)
        assert [m for m, _ in index.search("team_a", "", query, narrow, 0, 20).semantic] == exact
    db.close()


def test_records_written_after_a_large_view_was_built_are_found_by_their_own_vectors(tmp_path, small_ivf):
    rng = np.random.default_rng(3)
    vectors = _blobs(rng, 1_300)
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    index.upsert(_docs(vectors[:1_000]))
    index.search("team_a", "", tuple(vectors[0].tolist()), MemoryFilter(), 0, 5)  # builds the view
    late = _docs(vectors[1_000:], start=1_000)
    index.upsert(late)
    for doc in late[::30]:
        found = index.search("team_a", "", doc.vector, MemoryFilter(), 0, 5).semantic
        assert found[0][0] == doc.memory.id
    index.remove("team_a", [late[0].memory.id])
    found = index.search("team_a", "", late[0].vector, MemoryFilter(), 0, 5).semantic
    assert late[0].memory.id not in {m for m, _ in found}
    db.close()


def test_a_team_under_the_size_keeps_the_exact_scan(tmp_path, monkeypatch):
    monkeypatch.setattr(search_ivf, "MIN_ROWS", 10_000)
    rng = np.random.default_rng(4)
    vectors = _blobs(rng, 800)
    docs = _docs(vectors)
    db = SqliteDatabase(tmp_path / "s.db")
    index = SqliteSearchIndex(db)
    index.upsert(docs)
    for i in rng.choice(len(docs), 5, replace=False):
        query = vectors[i]
        found = index.search("team_a", "", tuple(query.tolist()), MemoryFilter(), 0, 20).semantic
        assert [m for m, _ in found] == _exact(docs, query, MemoryFilter(), 20)
    db.close()

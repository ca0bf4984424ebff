"""`SearchIndex` adapter for local mode: FTS5 BM25 and numpy k-NN over one SQLite file.

`search_docs` holds each memory's filter fields, `search_vectors` its vector (float32 blob) and
`search_fts` the analyzer's terms, all under one rowid, so both legs commit atomically with each other
and, when the caller shares the transaction, with the memories themselves. Vectors live apart from the
filter fields because BM25 joins every match to its filter row: compact rows halved that join at 10k
memories. Vectors are searched as a per-team matrix kept in memory; a per-team generation number,
bumped in the same transaction as every write, tells this process (and any other process on the same
file) when that matrix is stale.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cairn.adapters.local.db import SqliteDatabase
from cairn.domain.models import Candidates, IndexedMemory, MemoryFilter, Scope
from cairn.search.analyzer import analyzed_text, fts5_match_query, query_terms

_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_docs (
    rowid INTEGER PRIMARY KEY,
    team_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    project TEXT,
    owner TEXT,
    tags TEXT NOT NULL,          -- JSON array
    session_id TEXT,
    is_current INTEGER NOT NULL,
    UNIQUE (team_id, memory_id)
);
CREATE TABLE IF NOT EXISTS search_vectors (
    rowid INTEGER PRIMARY KEY,   -- = search_docs.rowid
    team_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS search_vectors_team ON search_vectors (team_id, dim);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    body, head, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS search_generation (
    team_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
"""

# bm25(body weight 1, head weight 2): title and tags are short and chosen on purpose, so a match
# there says more than one in the body. CROSS JOIN pins FTS5 as the outer loop: the match drives and
# docs are fetched by rowid.
_LEXICAL_SELECT = (
    "SELECT d.memory_id, bm25(search_fts, 1.0, 2.0) AS score"
    " FROM search_fts CROSS JOIN search_docs d ON d.rowid = search_fts.rowid"
    " WHERE search_fts MATCH ? AND d.team_id = ?"
)


_MASKS_PER_TEAM = 64  # a team asks with a handful of filters (its projects x members); bounded anyway
_CACHED_TEAMS = 16  # 10k memories of 384-d are 15 MB; local mode rarely serves more than a few teams


@dataclass(frozen=True, slots=True)
class _TeamVectors:
    """One team's vectors of one dimension with the filter fields, row-aligned, for masked k-NN."""

    generation: int
    ids: np.ndarray  # memory ids (object)
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalised by the embedder
    kind: np.ndarray
    scope: np.ndarray
    project: np.ndarray
    owner: np.ndarray
    session_id: np.ndarray
    is_current: np.ndarray  # bool
    tags: tuple[frozenset[str], ...]
    # the one mutable part: masks of the filters recently asked for, valid as long as this snapshot
    masks: dict[MemoryFilter, np.ndarray] = field(default_factory=dict)


class SqliteSearchIndex:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        self._db.ensure_schema(_SCHEMA)
        self._cache: OrderedDict[tuple[str, int], _TeamVectors] = OrderedDict()  # least recent first
        self._cache_lock = threading.Lock()

    # -- writes -------------------------------------------------------------------------------------

    def upsert(self, docs: Sequence[IndexedMemory]) -> None:
        if not docs:
            return
        teams = {d.memory.team_id for d in docs}
        with self._db.transaction() as conn:
            for doc in docs:
                self._delete(conn, doc.memory.team_id, doc.memory.id)
                self._insert(conn, doc)
            for team_id in teams:
                self._bump(conn, team_id)

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        with self._db.transaction() as conn:
            for memory_id in memory_ids:
                self._delete(conn, team_id, memory_id)
            self._bump(conn, team_id)

    def clear_team(self, team_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "DELETE FROM search_fts WHERE rowid IN (SELECT rowid FROM search_docs WHERE team_id = ?)",
                (team_id,),
            )
            conn.execute("DELETE FROM search_vectors WHERE team_id = ?", (team_id,))
            conn.execute("DELETE FROM search_docs WHERE team_id = ?", (team_id,))
            self._bump(conn, team_id)

    @staticmethod
    def _insert(conn: sqlite3.Connection, doc: IndexedMemory) -> None:
        m = doc.memory
        vector = None if doc.vector is None else np.asarray(doc.vector, dtype=np.float32)
        cur = conn.execute(
            "INSERT INTO search_docs (team_id, memory_id, kind, scope, project, owner, tags, session_id,"
            " is_current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                m.team_id,
                m.id,
                m.kind.value,
                m.scope.value,
                m.project,
                m.owner,
                json.dumps(list(m.tags)),
                m.provenance.session_id,
                int(m.is_current),
            ),
        )
        if vector is not None:
            conn.execute(
                "INSERT INTO search_vectors (rowid, team_id, dim, vector) VALUES (?, ?, ?, ?)",
                (cur.lastrowid, m.team_id, len(vector), vector.tobytes()),
            )
        head = analyzed_text(" ".join([m.title or "", *m.tags]))
        conn.execute(
            "INSERT INTO search_fts (rowid, body, head) VALUES (?, ?, ?)",
            (cur.lastrowid, analyzed_text(m.content), head),
        )

    @staticmethod
    def _delete(conn: sqlite3.Connection, team_id: str, memory_id: str) -> None:
        row = conn.execute(
            "SELECT rowid FROM search_docs WHERE team_id = ? AND memory_id = ?", (team_id, memory_id)
        ).fetchone()
        if row is not None:
            conn.execute("DELETE FROM search_fts WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_vectors WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_docs WHERE rowid = ?", (row[0],))

    @staticmethod
    def _bump(conn: sqlite3.Connection, team_id: str) -> None:
        conn.execute(
            "INSERT INTO search_generation (team_id, generation) VALUES (?, 1)"
            " ON CONFLICT (team_id) DO UPDATE SET generation = generation + 1",
            (team_id,),
        )

    # -- search -------------------------------------------------------------------------------------

    def search(
        self,
        team_id: str,
        query_text: str,
        query_vector: Sequence[float] | None,
        flt: MemoryFilter,
        k_lexical: int,
        k_semantic: int,
    ) -> Candidates:
        lexical = self._lexical(team_id, query_text, flt, k_lexical) if k_lexical > 0 else ()
        semantic: tuple[tuple[str, float], ...] = ()
        if query_vector is not None and k_semantic > 0:
            query = np.asarray(query_vector, dtype=np.float32)
            norm = float(np.linalg.norm(query))
            if norm > 0 and np.isfinite(norm):
                semantic = self._semantic(team_id, query / norm, flt, k_semantic)
        return Candidates(lexical=lexical, semantic=semantic)

    def _lexical(
        self, team_id: str, query_text: str, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        terms = query_terms(query_text or "")
        if not terms:
            return ()
        where, params = _filter_sql(flt)
        sql = f"{_LEXICAL_SELECT}{where} ORDER BY score LIMIT ?"
        with self._db.read() as conn:
            rows = conn.execute(sql, (fts5_match_query(terms), team_id, *params, k)).fetchall()
        # FTS5's bm25() is lower-is-better; the port wants higher-is-better engine scores.
        return tuple((r[0], -float(r[1])) for r in rows)

    def _semantic(
        self, team_id: str, query: np.ndarray, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        team = self._vectors(team_id, len(query))
        if not len(team.ids):
            return ()
        mask = team.masks.get(flt)
        if mask is None:
            if len(team.masks) >= _MASKS_PER_TEAM:
                team.masks.clear()
            mask = team.masks[flt] = _filter_mask(team, flt)
        # einsum, not `@`: BLAS gemv hands this size to OpenBLAS worker threads, which then spin for
        # ~0.1 s; with a recall every few tens of ms one of them never slept, burning a whole core of
        # the two and doubling recall latency under load. einsum's loop is ~1 ms at 10k and stays put.
        scores = np.einsum("ij,j->i", team.matrix, query)
        scores = np.where(mask, scores, -np.inf)
        admitted = int(mask.sum())
        k = min(k, admitted)
        if k <= 0:
            return ()
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        ranked = sorted((-float(scores[i]), str(team.ids[i])) for i in top)
        return tuple((memory_id, -negated) for negated, memory_id in ranked)

    def _vectors(self, team_id: str, dim: int) -> _TeamVectors:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT generation FROM search_generation WHERE team_id = ?", (team_id,)
            ).fetchone()
            generation = row[0] if row else 0
            with self._cache_lock:
                cached = self._cache.get((team_id, dim))
                if cached is not None and cached.generation == generation:
                    self._cache.move_to_end((team_id, dim))
                    return cached
            rows = conn.execute(
                "SELECT d.memory_id, d.kind, d.scope, d.project, d.owner, d.tags, d.session_id,"
                " d.is_current, v.vector FROM search_vectors v JOIN search_docs d ON d.rowid = v.rowid"
                " WHERE v.team_id = ? AND v.dim = ? ORDER BY v.rowid",
                (team_id, dim),
            ).fetchall()
        team = _build_vectors(generation, rows, dim)
        with self._cache_lock:
            self._cache[(team_id, dim)] = team
            self._cache.move_to_end((team_id, dim))
            while len(self._cache) > _CACHED_TEAMS:
                self._cache.popitem(last=False)
        return team


def _build_vectors(generation: int, rows: list[sqlite3.Row], dim: int) -> _TeamVectors:
    def column(i: int) -> np.ndarray:
        return np.array([r[i] for r in rows], dtype=object)

    matrix = np.frombuffer(b"".join(r[8] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return _TeamVectors(
        generation=generation,
        ids=column(0),
        matrix=matrix,
        kind=column(1),
        scope=column(2),
        project=column(3),
        owner=column(4),
        session_id=column(6),
        is_current=np.array([bool(r[7]) for r in rows], dtype=bool),
        tags=tuple(frozenset(json.loads(r[5])) for r in rows),
    )


def _filter_sql(flt: MemoryFilter) -> tuple[str, list[object]]:
    """`MemoryFilter.admits` as SQL over search_docs (alias d); each clause mirrors one rule there."""
    clauses: list[str] = []
    params: list[object] = []
    if not flt.include_superseded:
        clauses.append("d.is_current = 1")
    if flt.kinds:
        clauses.append(f"d.kind IN ({', '.join('?' * len(flt.kinds))})")
        params.extend(sorted(k.value for k in flt.kinds))
    if flt.scopes:
        clauses.append(f"d.scope IN ({', '.join('?' * len(flt.scopes))})")
        params.extend(sorted(s.value for s in flt.scopes))
    clauses.append("(d.scope != ? OR d.owner IS ?)")
    params.extend([Scope.PERSONAL.value, flt.member])
    if flt.project is not None:
        if flt.include_team_scope:
            clauses.append("(d.project = ? OR d.scope = ?)")
            params.extend([flt.project, Scope.TEAM.value])
        else:
            clauses.append("d.project = ?")
            params.append(flt.project)
    if flt.tags:
        clauses.append(
            f"EXISTS (SELECT 1 FROM json_each(d.tags) WHERE value IN ({', '.join('?' * len(flt.tags))}))"  # noqa: S608
        )
        params.extend(sorted(flt.tags))
    if flt.session_id:
        clauses.append("d.session_id = ?")
        params.append(flt.session_id)
    return "".join(f" AND {c}" for c in clauses), params


def _filter_mask(team: _TeamVectors, flt: MemoryFilter) -> np.ndarray:
    """`MemoryFilter.admits` over the cached filter columns; mirrors `_filter_sql` rule by rule."""
    mask = np.ones(len(team.ids), dtype=bool)
    if not flt.include_superseded:
        mask &= team.is_current
    if flt.kinds:
        mask &= np.isin(team.kind, [k.value for k in flt.kinds])
    if flt.scopes:
        mask &= np.isin(team.scope, [s.value for s in flt.scopes])
    mask &= (team.scope != Scope.PERSONAL.value) | (team.owner == flt.member)
    if flt.project is not None:
        in_project = team.project == flt.project
        if flt.include_team_scope:
            in_project |= team.scope == Scope.TEAM.value
        mask &= in_project
    if flt.tags:
        mask &= np.fromiter((bool(flt.tags & t) for t in team.tags), dtype=bool, count=len(team.tags))
    if flt.session_id:
        mask &= team.session_id == flt.session_id
    return mask

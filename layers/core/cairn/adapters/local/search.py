"""`SearchIndex` adapter for local mode: BM25 and k-NN over one SQLite file, searched in memory.

SQLite is the source of truth for the index too: `search_docs` holds each memory's filter fields,
`search_vectors` its vector (float32 blob) and `search_fts` the analyzer's terms, all under one rowid,
written in one transaction (with the memory itself when the caller shares it), so a crash leaves the
memory and its index entries both there or both gone. Each write bumps the team's generation and stamps
its rows with it.

Searches run over a per-team in-memory view (`search_segments`): filter codes, a float32 matrix and
BM25 postings, built from those tables on first use. A later generation is caught up incrementally: the
rows stamped after the view's generation become a new segment, rows no longer in `search_docs` are
marked dead, and the segments are merged back into one when the new ones or the dead rows grow large.
Any process on the same file sees the same generation, so its view is never stale. Filtering happens
inside both legs, by masks over the view's rows. A team past `search_ivf.MIN_ROWS` vectors also gets
clusters of its vectors when its view is built, and a broad filter's k-NN scores only the nearest
clusters' rows (`search_ivf`): derived in memory like the rest of the view, never stored.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from itertools import islice

import numpy as np

from cairn.adapters.local import search_ivf
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.search_segments import TeamView, build_segment
from cairn.domain.models import (
    Candidates,
    IndexedMemory,
    Memory,
    MemoryFilter,
    MemoryKind,
    Provenance,
    Scope,
    vector_key,
)
from cairn.domain.ports import BuildProgress, PendingDoc, VersionCounts
from cairn.search.analyzer import analyzed_text, query_terms

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
-- what each excerpt leaves out of its tools' outputs (`Memory.tool_text`), under its doc's rowid: searched
-- apart from the ranked legs (`ToolTextSearch`), by FTS5 itself (explicit recall alone asks it)
CREATE VIRTUAL TABLE IF NOT EXISTS search_told USING fts5(
    body, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS search_generation (
    team_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
-- the vectors of the model a reindex is building, beside the served ones until the swap: keyed by the
-- doc's rowid and stamped with the doc's `written`, so a doc rewritten since (or deleted) shows as not done
CREATE TABLE IF NOT EXISTS search_vectors_next (
    rowid INTEGER PRIMARY KEY,   -- = search_docs.rowid
    team_id TEXT NOT NULL,
    version TEXT NOT NULL,
    written INTEGER NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    text_key TEXT
);
CREATE INDEX IF NOT EXISTS search_vectors_next_key ON search_vectors_next (text_key);
CREATE INDEX IF NOT EXISTS search_vectors_next_team ON search_vectors_next (team_id);
-- which model's vectors `search_vectors` holds (the served set), which one is being built, and the
-- build's progress, committed with each batch of its vectors
CREATE TABLE IF NOT EXISTS search_model (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    active TEXT,
    building TEXT,
    batches INTEGER NOT NULL DEFAULT 0,
    staged INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO search_model (id) VALUES (1);
"""
# the generation that wrote each row: what a view at an older generation has not seen yet
_UPGRADE = """
CREATE INDEX IF NOT EXISTS search_docs_written ON search_docs (team_id, written);
CREATE INDEX IF NOT EXISTS search_vectors_key ON search_vectors (text_key);
"""

_ROWS = (
    "SELECT d.rowid, d.memory_id, d.kind, d.scope, d.project, d.owner, d.tags, d.session_id, d.is_current,"
    " f.body, f.head, v.dim, v.vector FROM search_docs d"
    " JOIN search_fts f ON f.rowid = d.rowid LEFT JOIN search_vectors v ON v.rowid = d.rowid"
    " WHERE d.team_id = ? AND d.written > ? ORDER BY d.rowid"
)

_TOLD = (
    "SELECT d.memory_id, d.kind, d.scope, d.project, d.owner, d.tags, d.session_id, d.is_current,"
    " bm25(search_told) AS score FROM search_told JOIN search_docs d ON d.rowid = search_told.rowid"
    " WHERE search_told MATCH ? AND d.team_id = ?"
)
_TOLD_TERMS = 64  # a query's words OR'ed: a pasted page is no question
_TOLD_SPARE = 50  # matches read past k for those the rest of the filter drops (another member's)
_CACHED_TEAMS = 16  # local mode rarely serves more than a few teams
_MERGE_AT = 0.2  # merge when new segments or dead rows pass this share of the rows
_MERGE_MIN = 1_000  # ... and this many rows
_SEGMENT_ROWS = 25_000
_MOST_SEGMENTS = 8  # a larger team gets larger segments: each costs both legs a few numpy calls per query


class SqliteSearchIndex:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        self._db.ensure_schema(_SCHEMA)
        with self._db.transaction() as conn:
            columns = {r[1] for r in conn.execute("PRAGMA table_info(search_docs)")}
            if "written" not in columns:
                conn.execute("ALTER TABLE search_docs ADD COLUMN written INTEGER NOT NULL DEFAULT 0")
            # the `vector_key` of each vector (model + text), so a known vector is never computed again
            if "text_key" not in {r[1] for r in conn.execute("PRAGMA table_info(search_vectors)")}:
                conn.execute("ALTER TABLE search_vectors ADD COLUMN text_key TEXT")
        self._db.ensure_schema(_UPGRADE)
        self._views: OrderedDict[str, TeamView] = OrderedDict()  # least recent first
        self._views_lock = threading.Lock()
        self._refresh_lock = threading.Lock()

    # -- writes -------------------------------------------------------------------------------------

    def upsert(self, docs: Sequence[IndexedMemory]) -> None:
        if not docs:
            return
        with self._db.transaction() as conn:
            active = _active(conn)
            if active is None:  # the first vectors written fix the served model
                active = next((d.memory.embedding_version for d in docs if d.vector is not None), None)
                if active is not None:
                    conn.execute("UPDATE search_model SET active = ? WHERE id = 1", (active,))
            written = {team_id: self._bump(conn, team_id) for team_id in {d.memory.team_id for d in docs}}
            for doc in docs:
                self._delete(conn, doc.memory.team_id, doc.memory.id)
                self._insert(conn, doc, written[doc.memory.team_id], active)

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
            conn.execute(
                "DELETE FROM search_told WHERE rowid IN (SELECT rowid FROM search_docs WHERE team_id = ?)",
                (team_id,),
            )
            conn.execute("DELETE FROM search_vectors WHERE team_id = ?", (team_id,))
            conn.execute("DELETE FROM search_vectors_next WHERE team_id = ?", (team_id,))
            conn.execute("DELETE FROM search_docs WHERE team_id = ?", (team_id,))
            self._bump(conn, team_id)

    def compact(self) -> None:
        """Merge the full-text index into one segment (FTS5 keeps a deleted entry's terms in older
        segments until a merge), then compact the file: after a redaction no old text stays on disk."""
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO search_fts(search_fts) VALUES('optimize')")
            conn.execute("INSERT INTO search_told(search_told) VALUES('optimize')")
        self._db.compact()

    def warm(self, team_id: str) -> None:
        """Build the team's in-memory view now (a server start), not on its first search."""
        self._view(team_id)

    def indexed(self, team_id: str) -> dict[str, bool]:
        """`ListableIndex`: each memory id this index holds for the team, and whether as current."""
        with self._db.read() as conn:
            rows = conn.execute("SELECT memory_id, is_current FROM search_docs WHERE team_id = ?", (team_id,))
            return {r[0]: bool(r[1]) for r in rows}

    def cached_vectors(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """`VectorCache`: the stored vectors of these `vector_key`s (any team: a key names a model and
        a text, nothing of who wrote it, and the vector never leaves this process)."""
        found: dict[str, list[float]] = {}
        with self._db.read() as conn:
            for sql in _CACHED:  # served and next model's sets: a key names its model, so no mix-up
                for start in range(0, len(keys), 500):
                    rows = conn.execute(sql, (json.dumps(list(keys[start : start + 500])),))
                    for key, blob in rows:
                        found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
        return found

    def stored_vectors(self, memories: Sequence[Memory], model: str) -> dict[str, list[float]]:
        """`StoredVectors`: memory id -> the vector stored for the memory's current search text by
        `model` (a vector is keyed by model and text, so a memory whose text changed since, or one
        embedded by another model, gets none)."""
        keys = {m.id: vector_key(model, m.search_text()) for m in memories}
        found = self.cached_vectors(list(dict.fromkeys(keys.values())))
        return {memory_id: found[key] for memory_id, key in keys.items() if key in found}

    # -- a model change: the next model's vectors are built beside the served ones, then swapped in ------

    def active_version(self) -> str | None:
        """`VersionedIndex`: the model whose vectors k-NN searches (None: no vector stored yet)."""
        with self._db.read() as conn:
            return _active(conn)

    def begin_version(self, version: str) -> BuildProgress:
        """Start building `version`'s vectors, or resume the build of it a killed run left: its staged
        vectors and batch count stay; those of any other model are dropped."""
        with self._db.transaction() as conn:
            row = conn.execute("SELECT building, batches, staged FROM search_model WHERE id = 1").fetchone()
            if row[0] != version:
                conn.execute("DELETE FROM search_vectors_next WHERE version != ?", (version,))
                conn.execute(
                    "UPDATE search_model SET building = ?, batches = 0, staged = 0 WHERE id = 1", (version,)
                )
                return BuildProgress(version, 0, 0, resumed=False)
            return BuildProgress(version, row[1], row[2], resumed=True)

    def unstaged(self, team_id: str, version: str, limit: int, after: int = 0) -> list[PendingDoc]:
        """The team's docs (by rowid past `after`) without a vector of `version` for their current write."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT d.memory_id, d.rowid, d.written FROM search_docs d"
                " LEFT JOIN search_vectors_next s"
                "   ON s.rowid = d.rowid AND s.written = d.written AND s.version = ?"
                " WHERE d.team_id = ? AND d.rowid > ? AND s.rowid IS NULL ORDER BY d.rowid LIMIT ?",
                (version, team_id, after, limit),
            ).fetchall()
        return [PendingDoc(r[0], r[1], r[2]) for r in rows]

    def unstaged_count(self, version: str) -> int:
        with self._db.read() as conn:
            return int(conn.execute(_UNSTAGED_COUNT, (version,)).fetchone()[0])

    def stage(self, version: str, entries: Sequence[tuple[PendingDoc, IndexedMemory]]) -> int:
        """One batch of `version`'s vectors and the build's progress, in one transaction (a kill -9
        keeps or loses both). A doc rewritten or removed since it was listed is skipped: it lists again."""
        with self._db.transaction() as conn:
            staged = 0
            for pending, doc in entries:
                if doc.vector is None:
                    continue
                cur = conn.execute(
                    "INSERT OR REPLACE INTO search_vectors_next"
                    " (rowid, team_id, version, written, dim, vector, text_key)"
                    " SELECT rowid, team_id, ?, written, ?, ?, ? FROM search_docs"
                    " WHERE rowid = ? AND written = ? AND memory_id = ?",
                    (
                        version,
                        len(doc.vector),
                        np.asarray(doc.vector, dtype=np.float32).tobytes(),
                        doc.text_key,
                        pending.rowid,
                        pending.written,
                        pending.memory_id,
                    ),
                )
                staged += cur.rowcount
            conn.execute(
                "UPDATE search_model SET batches = batches + 1, staged = staged + ?"
                " WHERE id = 1 AND building = ?",
                (staged, version),
            )
            return staged

    def swap(self, version: str) -> bool:
        """Serve `version`'s vectors, in one transaction: only when every doc of every team has one for
        its current write (else False: writes came in; stage those and call again). The old model's
        vectors go; every doc is re-stamped, so each process's views rebuild on their next search."""
        with self._db.transaction() as conn:
            if conn.execute("SELECT building FROM search_model WHERE id = 1").fetchone()[0] != version:
                return False
            if conn.execute(_UNSTAGED_COUNT, (version,)).fetchone()[0]:
                return False
            conn.execute("DELETE FROM search_vectors")
            conn.execute(
                "INSERT INTO search_vectors (rowid, team_id, dim, vector, text_key)"
                " SELECT s.rowid, s.team_id, s.dim, s.vector, s.text_key FROM search_vectors_next s"
                " JOIN search_docs d ON d.rowid = s.rowid AND d.written = s.written WHERE s.version = ?",
                (version,),
            )
            conn.execute("DELETE FROM search_vectors_next")
            conn.execute(
                "UPDATE search_model SET active = ?, building = NULL, batches = 0, staged = 0 WHERE id = 1",
                (version,),
            )
            for (team_id,) in conn.execute("SELECT DISTINCT team_id FROM search_docs").fetchall():
                written = self._bump(conn, team_id)
                conn.execute("UPDATE search_docs SET written = ? WHERE team_id = ?", (written, team_id))
            return True

    def version_counts(self) -> VersionCounts:
        """`VersionedIndex`: how many docs have a vector of each model, served and being built."""
        with self._db.read() as conn:
            active, building, batches = conn.execute(
                "SELECT active, building, batches FROM search_model WHERE id = 1"
            ).fetchone()
            docs = int(conn.execute("SELECT count(*) FROM search_docs").fetchone()[0])
            served = int(conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0])
            staged = 0
            if building is not None:
                staged = docs - int(conn.execute(_UNSTAGED_COUNT, (building,)).fetchone()[0])
        return VersionCounts(active, building, docs, served, staged, batches)

    @staticmethod
    def _insert(conn: sqlite3.Connection, doc: IndexedMemory, written: int, active: str | None) -> None:
        """The doc, and its vector in the set of the model that made it: the served set, or (a write
        made with the model a reindex is building) the next one. Vectors of two models never share a set."""
        m = doc.memory
        vector = None if doc.vector is None else np.asarray(doc.vector, dtype=np.float32)
        cur = conn.execute(
            "INSERT INTO search_docs (team_id, memory_id, kind, scope, project, owner, tags, session_id,"
            " is_current, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                written,
            ),
        )
        version = m.embedding_version or active
        if vector is not None and version == active:
            conn.execute(
                "INSERT INTO search_vectors (rowid, team_id, dim, vector, text_key) VALUES (?, ?, ?, ?, ?)",
                (cur.lastrowid, m.team_id, len(vector), vector.tobytes(), doc.text_key),
            )
        elif vector is not None:
            conn.execute(
                "INSERT INTO search_vectors_next (rowid, team_id, version, written, dim, vector, text_key)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cur.lastrowid, m.team_id, version, written, len(vector), vector.tobytes(), doc.text_key),
            )
        head = analyzed_text(" ".join([m.title or "", *m.tags]))
        conn.execute(
            "INSERT INTO search_fts (rowid, body, head) VALUES (?, ?, ?)",
            (cur.lastrowid, analyzed_text(m.content), head),
        )
        if told := m.tool_text:
            conn.execute(
                "INSERT INTO search_told (rowid, body) VALUES (?, ?)", (cur.lastrowid, analyzed_text(told))
            )

    @staticmethod
    def _delete(conn: sqlite3.Connection, team_id: str, memory_id: str) -> None:
        row = conn.execute(
            "SELECT rowid FROM search_docs WHERE team_id = ? AND memory_id = ?", (team_id, memory_id)
        ).fetchone()
        if row is not None:
            conn.execute("DELETE FROM search_fts WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_told WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_vectors WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_vectors_next WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM search_docs WHERE rowid = ?", (row[0],))

    @staticmethod
    def _bump(conn: sqlite3.Connection, team_id: str) -> int:
        return conn.execute(
            "INSERT INTO search_generation (team_id, generation) VALUES (?, 1)"
            " ON CONFLICT (team_id) DO UPDATE SET generation = generation + 1 RETURNING generation",
            (team_id,),
        ).fetchone()[0]

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
        lexical: tuple[tuple[str, float], ...] = ()
        semantic: tuple[tuple[str, float], ...] = ()
        terms = query_terms(query_text or "") if k_lexical > 0 else []
        query = None
        if query_vector is not None and k_semantic > 0:
            query = np.asarray(query_vector, dtype=np.float32)
            norm = float(np.linalg.norm(query))
            query = query / norm if norm > 0 and np.isfinite(norm) else None
        if not terms and query is None:
            return Candidates(lexical=(), semantic=())
        view = self._view(team_id)
        if terms:
            lexical = tuple(view.bm25(terms, flt, k_lexical))
        made_by = getattr(query_vector, "version", None)  # a `ModelVector` names its model
        if query is not None and (made_by is None or view.version is None or made_by == view.version):
            # (a query embedded just before a swap of models skips the k-NN leg, never compares across)
            semantic = tuple(view.knn(query, flt, k_semantic))
        return Candidates(lexical=lexical, semantic=semantic)

    def search_tool_text(
        self, team_id: str, query_text: str, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        """`ToolTextSearch`: FTS5's own BM25 over the team's excerpts' tool text, any query word. The
        filter is `MemoryFilter.admits` over each match's doc fields; a project's narrows the SQL first."""
        terms = list(dict.fromkeys(query_terms(query_text or "")))
        if not terms or k <= 0:
            return ()
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:_TOLD_TERMS])
        sql, args = _TOLD, [match, team_id]
        if flt.project is not None:
            sql, args = sql + " AND (d.project = ? OR d.scope = ?)", [*args, flt.project, Scope.TEAM.value]
        out: list[tuple[str, float]] = []
        with self._db.read() as conn:
            for row in conn.execute(sql + " ORDER BY score LIMIT ?", (*args, k + _TOLD_SPARE)):
                if flt.admits(_doc_fields(team_id, row)):
                    out.append((row[0], -float(row[-1])))  # FTS5's bm25() is lower for a better match
        return tuple(out[:k])

    def _view(self, team_id: str) -> TeamView:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT generation FROM search_generation WHERE team_id = ?", (team_id,)
            ).fetchone()
        generation = row[0] if row else 0
        with self._views_lock:
            view = self._views.get(team_id)
            if view is not None and view.generation == generation:
                self._views.move_to_end(team_id)
                return view
        with self._refresh_lock:  # one refresh at a time; a second caller then finds it done
            with self._views_lock:
                view = self._views.get(team_id)
            if view is None or view.generation != generation:
                view = self._refresh(team_id, view)
                with self._views_lock:
                    self._views[team_id] = view
                    self._views.move_to_end(team_id)
                    while len(self._views) > _CACHED_TEAMS:
                        self._views.popitem(last=False)
        return view

    def _refresh(self, team_id: str, view: TeamView | None) -> TeamView:
        """The view at the current generation: `view` caught up, or a new one when there is none or
        catching up would leave it fragmented."""
        with self._db.snapshot() as conn:  # one consistent read, off the shared connection's lock
            row = conn.execute(
                "SELECT generation FROM search_generation WHERE team_id = ?", (team_id,)
            ).fetchone()
            generation = row[0] if row else 0
            since = -1 if view is None else view.generation
            if view is None:
                return _whole(conn, team_id, generation)
            live = _count(conn, team_id, -1)
            fresh = _segments(conn, team_id, since, view.centroids)
            new_rowids = np.concatenate([f.rowids for f in fresh]) if fresh else np.zeros(0, np.int64)
            alive = [
                a & ~np.isin(s.rowids, new_rowids) for s, a in zip(view.segments, view.alive, strict=True)
            ]
            added = len(new_rowids)
            if sum(int(a.sum()) for a in alive) + added != live:  # rows were deleted: which?
                rowids = np.fromiter(
                    (
                        r[0]
                        for r in conn.execute("SELECT rowid FROM search_docs WHERE team_id = ?", (team_id,))
                    ),
                    dtype=np.int64,
                )
                alive = [a & np.isin(s.rowids, rowids) for s, a in zip(view.segments, alive, strict=True)]
            total = sum(len(s) for s in view.segments) + added
            dead = total - live
            small = sum(len(s) for s in view.segments[view.base :]) + added
            threshold = max(_MERGE_MIN, _MERGE_AT * live)
            if dead > threshold or small > threshold:
                return _whole(conn, team_id, generation)
            version = _active(conn)
        return TeamView(
            generation,
            (*view.segments, *fresh),
            (*alive, *(np.ones(len(f), bool) for f in fresh)),
            view.base,
            view.centroids,
            version,
        )


_CACHED = (
    "SELECT text_key, vector FROM search_vectors WHERE text_key IN (SELECT value FROM json_each(?))",
    "SELECT text_key, vector FROM search_vectors_next WHERE text_key IN (SELECT value FROM json_each(?))",
)
_UNSTAGED_COUNT = (
    "SELECT count(*) FROM search_docs d LEFT JOIN search_vectors_next s"
    " ON s.rowid = d.rowid AND s.written = d.written AND s.version = ? WHERE s.rowid IS NULL"
)


def _active(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT active FROM search_model WHERE id = 1").fetchone()
    return row[0] if row else None


def _count(conn: sqlite3.Connection, team_id: str, since: int) -> int:
    sql = "SELECT count(*) FROM search_docs WHERE team_id = ? AND written > ?"
    return int(conn.execute(sql, (team_id, since)).fetchone()[0])


def _segments(
    conn: sqlite3.Connection, team_id: str, since: int, centroids: np.ndarray | None = None
) -> list:
    """The rows written after generation `since`, as segments of `_SEGMENT_ROWS` rows, or of an eighth
    of them when that is more: building one holds its postings twice for a moment, so smaller segments
    keep a 100k-record team's peak memory ~100 MB lower, for a few more numpy calls per query (at 1M
    records, 40 segments cost each recall ~10 ms of such calls)."""
    sql = "SELECT project FROM search_docs WHERE team_id = ? AND written > ? ORDER BY rowid"
    projects = [r[0] for r in conn.execute(sql, (team_id, since))]
    rows = conn.execute(_ROWS, (team_id, since))
    size = max(_SEGMENT_ROWS, -(-len(projects) // _MOST_SEGMENTS))
    return [
        build_segment(islice(rows, len(chunk)), chunk, centroids)
        for chunk in (projects[i : i + size] for i in range(0, len(projects), size))
    ]


def _whole(conn: sqlite3.Connection, team_id: str, generation: int) -> TeamView:
    centroids = _clusters(conn, team_id)
    segments = _segments(conn, team_id, -1, centroids)
    return TeamView(
        generation,
        tuple(segments),
        tuple(np.ones(len(s), bool) for s in segments),
        len(segments),
        centroids,
        _active(conn),
    )


def _clusters(conn: sqlite3.Connection, team_id: str) -> np.ndarray | None:
    """A large team's vector clusters (`search_ivf`), trained on an evenly spaced sample of its vectors
    of the most common width; None below `search_ivf.MIN_ROWS` vectors."""
    row = conn.execute(
        "SELECT dim, count(*) AS n FROM search_vectors WHERE team_id = ?"
        " GROUP BY dim ORDER BY n DESC LIMIT 1",
        (team_id,),
    ).fetchone()
    if row is None or row[1] < search_ivf.MIN_ROWS:
        return None
    dim = int(row[0])
    sql = "SELECT rowid FROM search_vectors WHERE team_id = ? AND dim = ? ORDER BY rowid"
    rowids = np.fromiter((r[0] for r in conn.execute(sql, (team_id, dim))), dtype=np.int64)
    want = min(len(rowids), search_ivf.NLIST * search_ivf.SAMPLE_PER_CLUSTER)
    picked = rowids[np.linspace(0, len(rowids) - 1, want).astype(np.int64)].tolist()
    blobs: list[bytes] = []
    for start in range(0, len(picked), 2_000):
        blobs.extend(
            r[0]
            for r in conn.execute(
                "SELECT vector FROM search_vectors WHERE rowid IN (SELECT value FROM json_each(?))"
                " ORDER BY rowid",
                (json.dumps(picked[start : start + 2_000]),),
            )
        )
    sample = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dim)
    return search_ivf.train(sample, search_ivf.NLIST)


def _doc_fields(team_id: str, row: sqlite3.Row | tuple) -> Memory:
    """A match's filter fields as the memory `MemoryFilter.admits` reads (its text is not needed)."""
    memory_id, kind, scope, project, owner, tags, session_id, current = row[:8]
    return Memory(
        id=memory_id,
        team_id=team_id,
        kind=MemoryKind(kind),
        content="",
        scope=Scope(scope),
        project=project,
        owner=owner,
        tags=tuple(json.loads(tags or "[]")),
        provenance=Provenance(session_id=session_id),
        superseded_by=None if current else "?",
    )

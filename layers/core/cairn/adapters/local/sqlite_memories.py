"""SQLite memory and relation repositories (shared conventions in sqlite_table).

A memory's filter is pushed down as SQL that mirrors `MemoryFilter.admits` clause for clause; deleting a
memory removes its relations in the same transaction. The overview counters (`domain.counting`) are kept
by triggers, so every write to `memories` changes them in its own transaction, whichever path made it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.sqlite_table import BATCH, check_limit, decode_cursor, dumps, page_of, us
from cairn.domain.codec import decode_memory, decode_relation, dt_in, dt_out, encode_memory, encode_relation
from cairn.domain.counting import CountKey, counters_answer, counts_from_counters
from cairn.domain.errors import Conflict, InvalidInput, NotFound
from cairn.domain.models import Memory, MemoryCount, MemoryFilter, MemoryKind, Page, Relation, Scope

MEMORY_DDL = """
CREATE TABLE IF NOT EXISTS memories (
    team_id TEXT NOT NULL,
    id TEXT NOT NULL,
    project TEXT,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    owner TEXT,
    session_id TEXT,
    content_hash TEXT NOT NULL,
    superseded_by TEXT,
    valid_to TEXT,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    PRIMARY KEY (team_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memories_by_created ON memories (team_id, created_us DESC, id DESC);
CREATE INDEX IF NOT EXISTS memories_by_project ON memories (team_id, project, created_us DESC);
CREATE INDEX IF NOT EXISTS memories_by_kind_v2
    ON memories (team_id, kind, created_us DESC, id DESC, project, scope, owner, superseded_by, valid_to);
CREATE INDEX IF NOT EXISTS memories_by_hash ON memories (team_id, content_hash);
CREATE INDEX IF NOT EXISTS memories_by_session ON memories (team_id, session_id);
"""

RELATION_DDL = """
CREATE TABLE IF NOT EXISTS relations (
    team_id TEXT NOT NULL,
    id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_by_source ON relations (team_id, source_id);
CREATE INDEX IF NOT EXISTS relations_by_target ON relations (team_id, target_id);
"""


# one counter per (team, count_key): the key is the JSON array [project, scope, kind, owner of a personal
# memory], so NULLs compare equal in the primary key
COUNTS_DDL = """
CREATE TABLE IF NOT EXISTS memory_counts (
    team_id TEXT NOT NULL,
    k TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (team_id, k)
) WITHOUT ROWID;
"""

_KEY = "json_array({r}.project, {r}.scope, {r}.kind, CASE WHEN {r}.scope = 'personal' THEN {r}.owner END)"
_CURRENT = "{r}.superseded_by IS NULL AND {r}.valid_to IS NULL"
_COUNTED = "project, scope, kind, owner, superseded_by, valid_to"
_ADD_ONE = (
    "INSERT INTO memory_counts (team_id, k, n) VALUES (NEW.team_id, " + _KEY.format(r="NEW") + ", 1)"
    " ON CONFLICT (team_id, k) DO UPDATE SET n = n + 1;"
)
_TAKE_ONE = (
    "UPDATE memory_counts SET n = n - 1 WHERE team_id = OLD.team_id AND k = " + _KEY.format(r="OLD") + ";"
)
COUNT_TRIGGERS = f"""
CREATE TRIGGER IF NOT EXISTS memory_counts_insert AFTER INSERT ON memories
WHEN {_CURRENT.format(r="NEW")} BEGIN {_ADD_ONE} END;
CREATE TRIGGER IF NOT EXISTS memory_counts_delete AFTER DELETE ON memories
WHEN {_CURRENT.format(r="OLD")} BEGIN {_TAKE_ONE} END;
CREATE TRIGGER IF NOT EXISTS memory_counts_update_old AFTER UPDATE OF {_COUNTED} ON memories
WHEN {_CURRENT.format(r="OLD")} BEGIN {_TAKE_ONE} END;
CREATE TRIGGER IF NOT EXISTS memory_counts_update_new AFTER UPDATE OF {_COUNTED} ON memories
WHEN {_CURRENT.format(r="NEW")} BEGIN {_ADD_ONE} END;
"""


def _add_counts(db: SqliteDatabase) -> None:
    """Stores made before the counters existed get them, seeded from one GROUP BY in the transaction
    that creates the triggers (no write can fall between the seed and the first trigger)."""
    with db.read() as conn:
        have = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_counts'").fetchone()
    if have:
        return
    with db.transaction() as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_counts'").fetchone():
            return
        for statement in (COUNTS_DDL + COUNT_TRIGGERS).split(";\n"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(
            "INSERT INTO memory_counts (team_id, k, n) SELECT team_id, "
            + _KEY.format(r="memories")
            + ", count(*) FROM memories WHERE "
            + _CURRENT.format(r="memories")
            + " GROUP BY 1, 2"
        )


def _memory_columns(m: Memory) -> dict[str, Any]:
    return {
        "team_id": m.team_id,
        "id": m.id,
        "project": m.project,
        "kind": m.kind.value,
        "scope": m.scope.value,
        "owner": m.owner,
        "session_id": m.provenance.session_id,
        "content_hash": m.content_hash,
        "superseded_by": m.superseded_by,
        "valid_to": dt_out(m.valid_to),
        "created_us": us(m.created_at),
        "data": dumps(encode_memory(m)),
        "access_count": m.access_count,
        "last_accessed_at": dt_out(m.last_accessed_at),
    }


# access statistics live in their own columns (the copy inside `data` is not read back), so recording an
# access is one UPDATE instead of a JSON decode and re-encode per memory on every recall
_MEMORY_COLUMNS = "data, access_count, last_accessed_at"


def _add_access_columns(db: SqliteDatabase) -> None:
    """Stores made before the access columns existed get them, seeded from the JSON records."""
    with db.read() as conn:
        have = {r["name"] for r in conn.execute("PRAGMA table_info(memories)")}
    if "access_count" in have:
        return
    with db.transaction() as conn:
        conn.execute("ALTER TABLE memories ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0")
        conn.execute("ALTER TABLE memories ADD COLUMN last_accessed_at TEXT")
        conn.execute(
            "UPDATE memories SET access_count = json_extract(data, '$.access_count'),"
            " last_accessed_at = json_extract(data, '$.last_accessed_at')"
        )


def _decode_memory_row(row: sqlite3.Row) -> Memory:
    m = decode_memory(json.loads(row["data"]))
    return replace(m, access_count=row["access_count"], last_accessed_at=dt_in(row["last_accessed_at"]))


_MEMORY_INSERT = """
INSERT INTO memories (team_id, id, project, kind, scope, owner, session_id, content_hash,
                      superseded_by, valid_to, created_us, data, access_count, last_accessed_at)
VALUES (:team_id, :id, :project, :kind, :scope, :owner, :session_id, :content_hash,
        :superseded_by, :valid_to, :created_us, :data, :access_count, :last_accessed_at)
"""

_MEMORY_UPDATE = """
UPDATE memories SET project = :project, kind = :kind, scope = :scope, owner = :owner,
    session_id = :session_id, content_hash = :content_hash, superseded_by = :superseded_by,
    valid_to = :valid_to, created_us = :created_us, data = :data, access_count = :access_count,
    last_accessed_at = :last_accessed_at
WHERE team_id = :team_id AND id = :id
"""

# a handoff is handed over once: the write wins only while nobody has marked it delivered
_MEMORY_CLAIM = _MEMORY_UPDATE.rstrip() + "\n  AND json_extract(data, '$.details.delivered_at') IS NULL\n"


# `MemoryFilter.admits` as SQL, clause for clause and in the same order. Set-valued parameters are JSON
# arrays, or NULL when admits would skip the test (its truthiness: an empty set means "any", not "none").
# The personal clause uses IS because admits compares with !=, under which a None owner equals a None member.
def _memory_list_sql(params: dict[str, Any]) -> str:
    """The listing query with only the clauses whose filter is set.

    Generic `(:x IS NULL OR ...)` clauses would keep SQLite from choosing the kind or project index,
    so a listing of a rare kind (handoffs, episodes) would walk every row of the team."""
    where = _memory_where(params)
    # with a kind filter the kind index reads only those rows; the planner would otherwise prefer the
    # time index (no sort) and fetch every row of the team to test its kind
    # (a covering index: the rows are chosen and sorted from the index, and only `limit` rows are read)
    order = " ORDER BY created_us DESC, id DESC LIMIT :limit"
    if params["kinds"] is not None and params["tags"] is None:
        # every clause is a constant of this function; values are bound parameters
        inner = "SELECT id FROM memories INDEXED BY memories_by_kind_v2 WHERE " + " AND ".join(where)
        outer = f"SELECT id, created_us, {_MEMORY_COLUMNS} FROM memories WHERE team_id = :team_id"
        # the chosen ids (at most `limit`) are fetched by primary key and sorted; ordered by the bare
        # columns the planner walks the team's time index instead, all of it whenever fewer than
        # `limit` rows match (a kind this project has none of: ~25 ms at 10k memories, not 0.2 ms)
        return f"{outer} AND id IN ({inner}{order}) ORDER BY +created_us DESC, +id DESC LIMIT :limit"
    return f"SELECT id, created_us, {_MEMORY_COLUMNS} FROM memories WHERE " + " AND ".join(where) + order


def _memory_where(params: dict[str, Any]) -> list[str]:
    """The WHERE clauses of a memory filter (constants; values stay bound parameters)."""
    where = ["team_id = :team_id"]
    if not params["include_superseded"]:
        where.append("superseded_by IS NULL AND valid_to IS NULL")
    if params["kinds"] is not None:
        # literal IN lists (not json_each) so the planner can walk the kind index, one range per kind
        kinds = json.loads(params["kinds"])
        params.update({f"kind{i}": k for i, k in enumerate(kinds)})
        where.append(f"kind IN ({', '.join(f':kind{i}' for i in range(len(kinds)))})")
    if params["scopes"] is not None:
        where.append("scope IN (SELECT value FROM json_each(:scopes))")
    if not params["unfiltered"]:
        where.append("(scope != 'personal' OR owner IS :member)")
    if params["project"] is not None:
        where.append(
            "(project = :project OR scope = 'team')" if params["include_team_scope"] else "project = :project"
        )
    if params["projects"] is not None:
        where.append("(project IS NULL OR project IN (SELECT value FROM json_each(:projects)))")
    if params["tags"] is not None:
        where.append(
            "EXISTS (SELECT 1 FROM json_each(data, '$.tags') AS t"
            " WHERE t.value IN (SELECT value FROM json_each(:tags)))"
        )
    if params["session_id"] is not None:
        where.append("session_id = :session_id")
    if params["after_us"] is not None:
        where.append("(created_us < :after_us OR (created_us = :after_us AND id < :after_id))")
    return where


def _json_set(values: Any) -> str | None:
    return json.dumps(sorted(str(v) for v in values)) if values else None


def _filter_params(flt: MemoryFilter | None) -> dict[str, Any]:
    """Parameters of _MEMORY_LIST; None lists everything, every member's personal memories included."""
    if flt is None:
        return {
            "include_superseded": True, "kinds": None, "scopes": None, "unfiltered": True, "member": None,
            "project": None, "include_team_scope": True, "tags": None, "session_id": None, "projects": None,
        }  # fmt: skip
    return {
        "include_superseded": flt.include_superseded,
        "kinds": _json_set(flt.kinds),
        "scopes": _json_set(flt.scopes),
        "unfiltered": False,
        "member": flt.member,
        "project": flt.project,
        "include_team_scope": flt.include_team_scope,
        "tags": _json_set(flt.tags),
        "session_id": flt.session_id or None,
        "projects": None if flt.projects is None else json.dumps(sorted(flt.projects)),
    }


_FIND_BY_HASH = """
SELECT data, access_count, last_accessed_at FROM memories
WHERE team_id = :team_id AND content_hash = :content_hash
  AND superseded_by IS NULL AND valid_to IS NULL
  AND (project = :project OR (:project IS NULL AND scope = 'team'))
ORDER BY created_us DESC, id DESC
LIMIT 1
"""


class SqliteMemoryRepository:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        # delete() removes relations in the same transaction, so the table must exist either way
        db.ensure_schema(MEMORY_DDL + RELATION_DDL)
        _add_access_columns(db)
        _add_counts(db)

    def add(self, memory: Memory) -> None:
        try:
            with self._db.transaction() as conn:
                conn.execute(_MEMORY_INSERT, _memory_columns(memory))
        except sqlite3.IntegrityError as exc:
            raise Conflict("memory already exists", memory_id=memory.id) from exc

    def put(self, memory: Memory) -> None:
        with self._db.transaction() as conn:
            cur = conn.execute(_MEMORY_UPDATE, _memory_columns(memory))
        if cur.rowcount == 0:
            raise NotFound("memory not found", memory_id=memory.id)

    def put_if_undelivered(self, memory: Memory) -> bool:
        with self._db.transaction() as conn:
            return conn.execute(_MEMORY_CLAIM, _memory_columns(memory)).rowcount == 1

    def get(self, team_id: str, memory_id: str) -> Memory | None:
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE team_id = ? AND id = ?", (team_id, memory_id)
            ).fetchone()
        return None if row is None else _decode_memory_row(row)

    def get_many(self, team_id: str, memory_ids: Sequence[str]) -> dict[str, Memory]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories"
                " WHERE team_id = ? AND id IN (SELECT value FROM json_each(?))",
                (team_id, json.dumps(list(memory_ids))),
            ).fetchall()
        found = (_decode_memory_row(r) for r in rows)
        return {m.id: m for m in found}

    def delete(self, team_id: str, memory_id: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM memories WHERE team_id = ? AND id = ?", (team_id, memory_id))
            if cur.rowcount == 0:
                return False
            conn.execute(
                "DELETE FROM relations WHERE team_id = ? AND (source_id = ? OR target_id = ?)",
                (team_id, memory_id, memory_id),
            )
        return True

    def list(
        self, team_id: str, flt: MemoryFilter, limit: int = 50, cursor: str | None = None
    ) -> Page[Memory]:
        return self._scan(team_id, flt, limit, cursor)

    def _scan(self, team_id: str, flt: MemoryFilter | None, limit: int, cursor: str | None) -> Page[Memory]:
        check_limit(limit)
        after_us, after_id = decode_cursor(cursor) if cursor is not None else (None, None)
        params = _filter_params(flt) | {
            "team_id": team_id,
            "after_us": after_us,
            "after_id": after_id,
            "limit": limit + 1,
        }
        with self._db.read() as conn:
            rows = conn.execute(_memory_list_sql(params), params).fetchall()
        return page_of(rows, limit, "created_us", _decode_memory_row, raw=True)

    def counts(self, team_id: str, flt: MemoryFilter) -> list[MemoryCount]:
        if counters_answer(flt):
            return counts_from_counters(self.counters(team_id), flt)
        # one GROUP BY over the listing's own filter: the overview no longer decodes every row
        params = _filter_params(flt) | {"team_id": team_id, "after_us": None, "after_id": None}
        where = " AND ".join(_memory_where(params))  # clauses are constants; values are bound
        sql = (
            f"SELECT project, scope, kind, COUNT(*) FROM memories WHERE {where} GROUP BY project, scope, kind"
        )
        with self._db.read() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [MemoryCount(p, Scope(sc), MemoryKind(k), n) for p, sc, k, n in rows]

    def counters(self, team_id: str) -> list[tuple[CountKey, int]]:
        with self._db.read() as conn:
            rows = conn.execute("SELECT k, n FROM memory_counts WHERE team_id = ? AND n != 0", (team_id,))
            found = rows.fetchall()
        keys = ((json.loads(k), n) for k, n in found)
        return [((p, Scope(sc), MemoryKind(kd), o), n) for (p, sc, kd, o), n in keys]

    def find_by_hash(self, team_id: str, project: str | None, content_hash: str) -> Memory | None:
        params = {"team_id": team_id, "project": project, "content_hash": content_hash}
        with self._db.read() as conn:
            row = conn.execute(_FIND_BY_HASH, params).fetchone()
        return None if row is None else _decode_memory_row(row)

    def record_access(self, team_id: str, memory_ids: Sequence[str], at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?"
                " WHERE team_id = ? AND id IN (SELECT value FROM json_each(?))",
                (dt_out(at), team_id, json.dumps(list(dict.fromkeys(memory_ids)))),
            )

    def stamp_embedding_version(self, team_id: str, version: str) -> int:
        """`EmbeddingStamps`: every memory of the team stamped with the model its vector comes from."""
        with self._db.transaction() as conn:
            return conn.execute(
                "UPDATE memories SET data = json_set(data, '$.embedding_version', ?)"
                " WHERE team_id = ? AND json_extract(data, '$.embedding_version') IS NOT ?",
                (version, team_id, version),
            ).rowcount

    def embedding_versions(self, team_id: str) -> dict[str | None, int]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT json_extract(data, '$.embedding_version'), count(*) FROM memories"
                " WHERE team_id = ? GROUP BY 1",
                (team_id,),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def iter_team(self, team_id: str) -> Iterator[Memory]:
        # keyset batches so the shared connection is not held while the caller consumes items
        cursor: str | None = None
        while True:
            page = self._scan(team_id, None, BATCH, cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


_RELATIONS_OF = """
SELECT data FROM relations
WHERE team_id = :team_id
  AND ((:direction != 'in' AND source_id = :memory_id) OR (:direction != 'out' AND target_id = :memory_id))
ORDER BY created_us, id
"""


class SqliteRelationRepository:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.ensure_schema(RELATION_DDL)

    def add(self, relation: Relation) -> None:
        try:
            with self._db.transaction() as conn:
                conn.execute(
                    "INSERT INTO relations (team_id, id, source_id, target_id, created_us, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        relation.team_id,
                        relation.id,
                        relation.source_id,
                        relation.target_id,
                        us(relation.created_at),
                        dumps(encode_relation(relation)),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise Conflict("relation already exists", relation_id=relation.id) from exc

    def get(self, team_id: str, relation_id: str) -> Relation | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT data FROM relations WHERE team_id = ? AND id = ?", (team_id, relation_id)
            ).fetchone()
        return None if row is None else decode_relation(json.loads(row["data"]))

    def delete(self, team_id: str, relation_id: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM relations WHERE team_id = ? AND id = ?", (team_id, relation_id))
        return cur.rowcount > 0

    def for_memory(self, team_id: str, memory_id: str, direction: str = "both") -> list[Relation]:
        if direction not in ("in", "out", "both"):
            raise InvalidInput("direction must be in, out or both", direction=direction)
        params = {"team_id": team_id, "memory_id": memory_id, "direction": direction}
        with self._db.read() as conn:
            rows = conn.execute(_RELATIONS_OF, params).fetchall()
        return [decode_relation(json.loads(r["data"])) for r in rows]

    def iter_team(self, team_id: str) -> Iterator[Relation]:
        after = ""
        while True:
            with self._db.read() as conn:
                rows = conn.execute(
                    "SELECT id, data FROM relations WHERE team_id = ? AND id > ? ORDER BY id LIMIT ?",
                    (team_id, after, BATCH),
                ).fetchall()
            yield from (decode_relation(json.loads(r["data"])) for r in rows)
            if len(rows) < BATCH:
                return
            after = rows[-1]["id"]

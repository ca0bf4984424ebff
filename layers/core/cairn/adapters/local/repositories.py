"""SQLite implementations of the storage ports, for local (embedded) mode.

Every table keeps the full record as codec JSON in `data`, plus copies of the fields queries filter or
sort on as real, indexed columns; the JSON is the truth and the columns are derived from it on every
write. Rows are keyed by (team_id, id) and every statement names team_id, so no argument can reach
another team's rows. Timestamps used for ordering are stored as integer microseconds since the epoch,
because ISO strings do not sort reliably when microseconds are omitted.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from cairn.adapters.local.db import SqliteDatabase
from cairn.domain.codec import (
    decode_key,
    decode_memory,
    decode_relation,
    decode_session,
    decode_team,
    dt_in,
    dt_out,
    encode_key,
    encode_memory,
    encode_relation,
    encode_session,
    encode_team,
)
from cairn.domain.errors import Conflict, InvalidInput, NotFound
from cairn.domain.models import (
    ApiKey,
    Memory,
    MemoryCount,
    MemoryFilter,
    MemoryKind,
    Page,
    Relation,
    Scope,
    Session,
    Team,
)

_BATCH = 500  # rows per round trip when iterating a whole team


def _us(value: datetime) -> int:
    """Microseconds since the epoch: an exact, sortable integer for a datetime."""
    delta = value.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), sort_keys=True)


def _encode_cursor(sort_us: int, row_id: str) -> str:
    raw = json.dumps([sort_us, row_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        sort_us, row_id = json.loads(raw)
        if not isinstance(sort_us, int) or not isinstance(row_id, str):
            raise ValueError("wrong types")
        return sort_us, row_id
    except (ValueError, TypeError) as exc:
        raise InvalidInput("malformed pagination cursor") from exc


def _check_limit(limit: int) -> None:
    if limit < 1:
        raise InvalidInput("limit must be at least 1", limit=limit)


def _page(rows: list[sqlite3.Row], limit: int, sort_column: str, decode, raw: bool = False) -> Page[Any]:
    """Rows were fetched with limit + 1, so an extra row means there is a next page; `decode` takes the
    record's JSON, or with `raw` the whole row."""
    items = tuple(decode(r) if raw else decode(json.loads(r["data"])) for r in rows[:limit])
    if len(rows) <= limit:
        return Page(items=items)
    last = rows[limit - 1]
    return Page(items=items, next_cursor=_encode_cursor(last[sort_column], last["id"]))


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

SESSION_DDL = """
CREATE TABLE IF NOT EXISTS sessions (
    team_id TEXT NOT NULL,
    id TEXT NOT NULL,
    project TEXT,
    updated_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions (team_id, updated_us DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_project ON sessions (team_id, project, updated_us DESC, id DESC);
"""

TEAM_DDL = """
CREATE TABLE IF NOT EXISTS teams (
    id TEXT PRIMARY KEY,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    team_id TEXT NOT NULL,
    id TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_by_hash ON api_keys (key_hash);
"""


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
        "created_us": _us(m.created_at),
        "data": _dump(encode_memory(m)),
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
            "project": None, "include_team_scope": True, "tags": None, "session_id": None,
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
        _check_limit(limit)
        after_us, after_id = _decode_cursor(cursor) if cursor is not None else (None, None)
        params = _filter_params(flt) | {
            "team_id": team_id,
            "after_us": after_us,
            "after_id": after_id,
            "limit": limit + 1,
        }
        with self._db.read() as conn:
            rows = conn.execute(_memory_list_sql(params), params).fetchall()
        return _page(rows, limit, "created_us", _decode_memory_row, raw=True)

    def counts(self, team_id: str, flt: MemoryFilter) -> list[MemoryCount]:
        # one GROUP BY over the listing's own filter: the overview no longer decodes every row
        params = _filter_params(flt) | {"team_id": team_id, "after_us": None, "after_id": None}
        where = " AND ".join(_memory_where(params))  # clauses are constants; values are bound
        sql = (
            f"SELECT project, scope, kind, COUNT(*) FROM memories WHERE {where} GROUP BY project, scope, kind"
        )
        with self._db.read() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [MemoryCount(p, Scope(sc), MemoryKind(k), n) for p, sc, k, n in rows]

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
            page = self._scan(team_id, None, _BATCH, cursor)
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
                        _us(relation.created_at),
                        _dump(encode_relation(relation)),
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
                    (team_id, after, _BATCH),
                ).fetchall()
            yield from (decode_relation(json.loads(r["data"])) for r in rows)
            if len(rows) < _BATCH:
                return
            after = rows[-1]["id"]


_SESSION_LIST = """
SELECT id, updated_us, data FROM sessions
WHERE team_id = :team_id
  AND (:project IS NULL OR project = :project)
  AND (:after_us IS NULL OR updated_us < :after_us OR (updated_us = :after_us AND id < :after_id))
ORDER BY updated_us DESC, id DESC
LIMIT :limit
"""


class SqliteSessionRepository:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.ensure_schema(SESSION_DDL)

    def put(self, session: Session) -> None:
        with self._db.transaction() as conn:
            self._write(conn, session)

    def get(self, team_id: str, session_id: str) -> Session | None:
        with self._db.read() as conn:
            return self._read(conn, team_id, session_id)

    def update(
        self, team_id: str, session_id: str, change: Callable[[Session | None], Session | None]
    ) -> Session | None:
        # BEGIN IMMEDIATE holds the write lock from the read on, so nobody can write in between
        with self._db.transaction() as conn:
            updated = change(self._read(conn, team_id, session_id))
            if updated is not None:
                self._write(conn, updated)
            return updated

    @staticmethod
    def _read(conn: sqlite3.Connection, team_id: str, session_id: str) -> Session | None:
        row = conn.execute(
            "SELECT data FROM sessions WHERE team_id = ? AND id = ?", (team_id, session_id)
        ).fetchone()
        return None if row is None else decode_session(json.loads(row["data"]))

    @staticmethod
    def _write(conn: sqlite3.Connection, session: Session) -> None:
        conn.execute(
            "INSERT INTO sessions (team_id, id, project, updated_us, data) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (team_id, id) DO UPDATE SET "
            "project = excluded.project, updated_us = excluded.updated_us, data = excluded.data",
            (
                session.team_id,
                session.id,
                session.project,
                _us(session.updated_at),
                _dump(encode_session(session)),
            ),
        )

    def list(
        self, team_id: str, project: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> Page[Session]:
        _check_limit(limit)
        after_us, after_id = _decode_cursor(cursor) if cursor is not None else (None, None)
        params = {
            "team_id": team_id,
            "project": project,
            "after_us": after_us,
            "after_id": after_id,
            "limit": limit + 1,
        }
        with self._db.read() as conn:
            rows = conn.execute(_SESSION_LIST, params).fetchall()
        return _page(rows, limit, "updated_us", decode_session)

    def iter_team(self, team_id: str) -> Iterator[Session]:
        cursor: str | None = None
        while True:
            page = self.list(team_id, None, _BATCH, cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class SqliteTeamRepository:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.ensure_schema(TEAM_DDL)

    def add_team(self, team: Team) -> None:
        try:
            with self._db.transaction() as conn:
                conn.execute(
                    "INSERT INTO teams (id, created_us, data) VALUES (?, ?, ?)",
                    (team.id, _us(team.created_at), _dump(encode_team(team))),
                )
        except sqlite3.IntegrityError as exc:
            raise Conflict("team already exists", team_id=team.id) from exc

    def get_team(self, team_id: str) -> Team | None:
        with self._db.read() as conn:
            row = conn.execute("SELECT data FROM teams WHERE id = ?", (team_id,)).fetchone()
        return None if row is None else decode_team(json.loads(row["data"]))

    def list_teams(self) -> list[Team]:
        with self._db.read() as conn:
            rows = conn.execute("SELECT data FROM teams ORDER BY created_us, id").fetchall()
        return [decode_team(json.loads(r["data"])) for r in rows]

    def add_key(self, key: ApiKey) -> None:
        try:
            with self._db.transaction() as conn:
                conn.execute(
                    "INSERT INTO api_keys (team_id, id, key_hash, created_us, data) VALUES (?, ?, ?, ?, ?)",
                    (key.team_id, key.id, key.key_hash, _us(key.created_at), _dump(encode_key(key))),
                )
        except sqlite3.IntegrityError as exc:
            raise Conflict("api key already exists", key_id=key.id) from exc

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        with self._db.read() as conn:
            row = conn.execute("SELECT data FROM api_keys WHERE key_hash = ?", (key_hash,)).fetchone()
        return None if row is None else decode_key(json.loads(row["data"]))

    def get_key(self, team_id: str, key_id: str) -> ApiKey | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT data FROM api_keys WHERE team_id = ? AND id = ?", (team_id, key_id)
            ).fetchone()
        return None if row is None else decode_key(json.loads(row["data"]))

    def list_keys(self, team_id: str) -> list[ApiKey]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT data FROM api_keys WHERE team_id = ? ORDER BY created_us, id", (team_id,)
            ).fetchall()
        return [decode_key(json.loads(r["data"])) for r in rows]

    def put_key(self, key: ApiKey) -> None:
        try:
            with self._db.transaction() as conn:
                cur = conn.execute(
                    "UPDATE api_keys SET key_hash = ?, created_us = ?, data = ? WHERE team_id = ? AND id = ?",
                    (key.key_hash, _us(key.created_at), _dump(encode_key(key)), key.team_id, key.id),
                )
        except sqlite3.IntegrityError as exc:
            raise Conflict("another key has this hash", key_id=key.id) from exc
        if cur.rowcount == 0:
            raise NotFound("api key not found", key_id=key.id)

    def touch_key(self, key: ApiKey, used_at: datetime) -> bool:
        with self._db.transaction() as conn:  # BEGIN IMMEDIATE: no revocation slips in between
            row = conn.execute(
                "SELECT data FROM api_keys WHERE team_id = ? AND id = ?", (key.team_id, key.id)
            ).fetchone()
            if row is None or decode_key(json.loads(row["data"])) != key:
                return False
            conn.execute(
                "UPDATE api_keys SET data = ? WHERE team_id = ? AND id = ?",
                (_dump(encode_key(replace(key, last_used_at=used_at))), key.team_id, key.id),
            )
        return True

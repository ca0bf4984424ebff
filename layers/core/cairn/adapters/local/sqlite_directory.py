"""SQLite session and team repositories: sessions, teams and their API keys (conventions in sqlite_table).

API keys are found by their hash alone (a unique index), which is what authentication needs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.sqlite_table import BATCH, check_limit, decode_cursor, dumps, page_of, us
from cairn.domain.codec import (
    decode_key,
    decode_session,
    decode_team,
    encode_key,
    encode_session,
    encode_team,
)
from cairn.domain.errors import Conflict, NotFound
from cairn.domain.models import ApiKey, Page, Session, Team

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
                us(session.updated_at),
                dumps(encode_session(session)),
            ),
        )

    def list(
        self, team_id: str, project: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> Page[Session]:
        check_limit(limit)
        after_us, after_id = decode_cursor(cursor) if cursor is not None else (None, None)
        params = {
            "team_id": team_id,
            "project": project,
            "after_us": after_us,
            "after_id": after_id,
            "limit": limit + 1,
        }
        with self._db.read() as conn:
            rows = conn.execute(_SESSION_LIST, params).fetchall()
        return page_of(rows, limit, "updated_us", decode_session)

    def iter_team(self, team_id: str) -> Iterator[Session]:
        cursor: str | None = None
        while True:
            page = self.list(team_id, None, BATCH, cursor)
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
                    (team.id, us(team.created_at), dumps(encode_team(team))),
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
                    (key.team_id, key.id, key.key_hash, us(key.created_at), dumps(encode_key(key))),
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
                    (key.key_hash, us(key.created_at), dumps(encode_key(key)), key.team_id, key.id),
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
                (dumps(encode_key(replace(key, last_used_at=used_at))), key.team_id, key.id),
            )
        return True

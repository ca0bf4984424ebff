"""SQLite adapter of the AuditLog port: one append-only table in the local store's database file.

Recorded inside the writer's transaction when there is one (the database's transactions nest), so a
memory and the entry that records its change commit together.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.sqlite_table import check_limit, decode_cursor, dumps, page_of, us
from cairn.domain.audit import AuditEntry, decode_entry, encode_entry
from cairn.domain.models import Page

AUDIT_DDL = """
CREATE TABLE IF NOT EXISTS audit (
    team_id TEXT NOT NULL,
    id TEXT NOT NULL,
    target TEXT NOT NULL,
    at_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (team_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (team_id, at_us DESC, id DESC);
CREATE INDEX IF NOT EXISTS audit_by_target ON audit (team_id, target, at_us DESC, id DESC);
"""

_LIST = """
SELECT id, at_us, data FROM audit
WHERE team_id = :team_id
  AND (:after_us IS NULL OR at_us < :after_us OR (at_us = :after_us AND id < :after_id))
ORDER BY at_us DESC, id DESC
LIMIT :limit
"""


class SqliteAuditLog:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.ensure_schema(AUDIT_DDL)

    def record(self, entries: Sequence[AuditEntry]) -> None:
        if not entries:
            return
        rows = [(e.team_id, e.id, e.target, us(e.at), dumps(encode_entry(e))) for e in entries]
        with self._db.transaction() as conn:
            conn.executemany("INSERT OR IGNORE INTO audit VALUES (?, ?, ?, ?, ?)", rows)

    def for_target(self, team_id: str, target: str, limit: int = 100) -> list[AuditEntry]:
        check_limit(limit)
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT data FROM audit WHERE team_id = ? AND target = ? "
                "ORDER BY at_us DESC, id DESC LIMIT ?",
                (team_id, target, limit),
            ).fetchall()
        return [decode_entry(json.loads(r["data"])) for r in rows]

    def list(self, team_id: str, limit: int = 50, cursor: str | None = None) -> Page[AuditEntry]:
        check_limit(limit)
        after_us, after_id = decode_cursor(cursor) if cursor is not None else (None, None)
        params = {"team_id": team_id, "after_us": after_us, "after_id": after_id, "limit": limit + 1}
        with self._db.read() as conn:
            rows = conn.execute(_LIST, params).fetchall()
        return page_of(rows, limit, "at_us", decode_entry)

"""`IndexAudit` for local mode: where the search index and the memories disagree, found in SQL.

Both live in the same SQLite file, so the comparison is three indexed anti-joins, fast enough to run
at every start-up (a store written before memory and index were one transaction, or by an older
version, may hold a memory the index lacks).
"""

from __future__ import annotations

from cairn.adapters.local.db import SqliteDatabase
from cairn.domain.ports import IndexDrift

_MISSING = """
SELECT m.id FROM memories m WHERE m.team_id = ?
AND NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.team_id = m.team_id AND d.memory_id = m.id)
"""
_ORPHANED = """
SELECT d.memory_id FROM search_docs d WHERE d.team_id = ?
AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.team_id = d.team_id AND m.id = d.memory_id)
"""
_STALE = """
SELECT m.id FROM memories m JOIN search_docs d ON d.team_id = m.team_id AND d.memory_id = m.id
WHERE m.team_id = ? AND d.is_current != (m.superseded_by IS NULL AND m.valid_to IS NULL)
"""


class SqliteIndexAudit:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    def drift(self, team_id: str) -> IndexDrift:
        with self._db.read() as conn:
            return IndexDrift(
                missing=tuple(sorted(r[0] for r in conn.execute(_MISSING, (team_id,)))),
                orphaned=tuple(sorted(r[0] for r in conn.execute(_ORPHANED, (team_id,)))),
                stale=tuple(sorted(r[0] for r in conn.execute(_STALE, (team_id,)))),
            )

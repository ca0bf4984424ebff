"""`IndexAudit` for local mode: where the search index and the memories disagree, found in SQL.

Both live in the same SQLite file, so the comparison is two id scans over covering indexes and one
join of the few superseded memories, ~0.3 s for 100k records: fast enough to run at every start-up (a
store written before memory and index were one transaction, or by an older version, may hold a memory
the index lacks).
"""

from __future__ import annotations

from cairn.adapters.local.db import SqliteDatabase
from cairn.domain.ports import IndexDrift

_MEMORY_IDS = "SELECT id FROM memories WHERE team_id = ?"
_INDEXED_IDS = "SELECT memory_id FROM search_docs WHERE team_id = ?"
# out of date either way: superseded (or closed) memories the index holds as current, and the reverse;
# both sides are few, so each query scans one covering index and joins only those
_STALE = """
SELECT m.id FROM memories m JOIN search_docs d ON d.team_id = m.team_id AND d.memory_id = m.id
WHERE m.team_id = ? AND (m.superseded_by IS NOT NULL OR m.valid_to IS NOT NULL) AND d.is_current = 1
UNION
SELECT d.memory_id FROM search_docs d JOIN memories m ON m.team_id = d.team_id AND m.id = d.memory_id
WHERE d.team_id = ? AND d.is_current = 0 AND m.superseded_by IS NULL AND m.valid_to IS NULL
"""


class SqliteIndexAudit:
    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    def drift(self, team_id: str) -> IndexDrift:
        with self._db.read() as conn:
            stored = {r[0] for r in conn.execute(_MEMORY_IDS, (team_id,))}
            indexed = {r[0] for r in conn.execute(_INDEXED_IDS, (team_id,))}
            stale = {r[0] for r in conn.execute(_STALE, (team_id, team_id))}
        return IndexDrift(
            missing=tuple(sorted(stored - indexed)),
            orphaned=tuple(sorted(indexed - stored)),
            stale=tuple(sorted(stale)),
        )

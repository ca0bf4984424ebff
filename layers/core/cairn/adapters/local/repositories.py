"""SQLite adapters of the storage ports, for local (embedded) mode, over one database file.

The shared conventions live in `sqlite_table`; the repositories in `sqlite_memories` (memories,
relations) and `sqlite_directory` (sessions, teams and keys), as the DynamoDB adapters are split. This
module is the one import for bootstrap and tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.sqlite_audit import SqliteAuditLog
from cairn.adapters.local.sqlite_directory import SqliteSessionRepository, SqliteTeamRepository
from cairn.adapters.local.sqlite_memories import SqliteMemoryRepository, SqliteRelationRepository

__all__ = [
    "SqliteAuditLog",
    "SqliteMemoryRepository",
    "SqliteRelationRepository",
    "SqliteRepositories",
    "SqliteSessionRepository",
    "SqliteTeamRepository",
    "sqlite_repositories",
]


@dataclass(frozen=True, slots=True)
class SqliteRepositories:
    memories: SqliteMemoryRepository
    relations: SqliteRelationRepository
    sessions: SqliteSessionRepository
    teams: SqliteTeamRepository
    audit: SqliteAuditLog


def sqlite_repositories(db: SqliteDatabase) -> SqliteRepositories:
    """Every SQLite repository over one database."""
    return SqliteRepositories(
        SqliteMemoryRepository(db),
        SqliteRelationRepository(db),
        SqliteSessionRepository(db),
        SqliteTeamRepository(db),
        SqliteAuditLog(db),
    )

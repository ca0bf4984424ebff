"""DynamoDB adapters of the storage ports, over one PynamoDB single table.

The layout and binding live in `dynamo_table`; the repositories in `dynamo_memories` (memories,
relations) and `dynamo_directory` (sessions, teams and keys). This module is the one import for
bootstrap and tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.adapters.aws.dynamo_audit import DynamoAuditLog
from cairn.adapters.aws.dynamo_directory import DynamoSessionRepository, DynamoTeamRepository
from cairn.adapters.aws.dynamo_memories import DynamoMemoryRepository, DynamoRelationRepository
from cairn.adapters.aws.dynamo_table import GSI_NAMES, TTL_ATTRIBUTE, DynamoTable, create_table

__all__ = [
    "DynamoAuditLog",
    "GSI_NAMES",
    "TTL_ATTRIBUTE",
    "DynamoMemoryRepository",
    "DynamoRelationRepository",
    "DynamoRepositories",
    "DynamoSessionRepository",
    "DynamoTable",
    "DynamoTeamRepository",
    "create_table",
    "dynamo_repositories",
]


@dataclass(frozen=True, slots=True)
class DynamoRepositories:
    memories: DynamoMemoryRepository
    relations: DynamoRelationRepository
    sessions: DynamoSessionRepository
    teams: DynamoTeamRepository
    audit: DynamoAuditLog


def dynamo_repositories(
    table_name: str,
    *,
    host: str | None = None,
    region: str | None = None,
    credentials: tuple[str, str] | None = None,
) -> DynamoRepositories:
    """Every DynamoDB repository bound to one table; `host` for a custom endpoint (moto, DynamoDB Local)."""
    table = DynamoTable.bind(table_name, host=host, region=region, credentials=credentials)
    return DynamoRepositories(
        DynamoMemoryRepository(table),
        DynamoRelationRepository(table),
        DynamoSessionRepository(table),
        DynamoTeamRepository(table),
        DynamoAuditLog(table),
    )

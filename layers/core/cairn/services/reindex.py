"""Rebuild the search index from the source of truth (SQLite locally, DynamoDB in AWS).

The index is derived data: after a mapping change, an embedding-model change or a lost OpenSearch
domain, `cairn reindex` clears each team's documents and indexes every memory again, superseded ones
included (they stay searchable on request, and the filter keeps them out by default).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from cairn.domain.ports import MemoryRepository, SearchIndex, TeamRepository
from cairn.services.memories import Indexer


@dataclass(frozen=True, slots=True)
class ReindexReport:
    teams: int
    memories: int


class ReindexService:
    def __init__(
        self, teams: TeamRepository, memories: MemoryRepository, index: SearchIndex, indexer: Indexer
    ) -> None:
        self._teams = teams
        self._memories = memories
        self._index = index
        self._indexer = indexer

    def rebuild(
        self,
        team_ids: list[str] | None = None,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> ReindexReport:
        teams = team_ids or [t.id for t in self._teams.list_teams()]
        total = 0
        for team_id in teams:
            self._index.clear_team(team_id)
            rows = self._memories.iter_team(team_id)
            while batch := list(islice(rows, batch_size)):
                self._indexer.index(batch)
                total += len(batch)
                if progress:
                    progress(len(batch))
        return ReindexReport(teams=len(teams), memories=total)

"""Rebuild the search index from the source of truth (SQLite locally, DynamoDB in AWS), or mend it.

The index is derived data. `rebuild` indexes every memory again, superseded ones included (they stay
searchable on request, and the filter keeps them out by default), then drops entries of memories that
are gone; vectors the index already holds for the same model and text are reused (`CachingEmbedder`),
so a rebuild with an unchanged model embeds nothing. An index that cannot list its entries is cleared
first instead. `check` reports where index and memories disagree and `repair` mends exactly that; local
mode repairs at every start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

from cairn.domain.ports import (
    IndexAudit,
    IndexDrift,
    ListableIndex,
    MemoryRepository,
    SearchIndex,
    TeamRepository,
)
from cairn.services.memories import Indexer


@dataclass(frozen=True, slots=True)
class ReindexReport:
    teams: int
    memories: int


@dataclass(frozen=True, slots=True)
class DriftReport:
    teams: dict[str, IndexDrift] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(d.total for d in self.teams.values())


class ReindexService:
    def __init__(
        self,
        teams: TeamRepository,
        memories: MemoryRepository,
        index: SearchIndex,
        indexer: Indexer,
        audit: IndexAudit | None = None,
    ) -> None:
        self._teams = teams
        self._memories = memories
        self._index = index
        self._indexer = indexer
        self._audit = audit

    def rebuild(
        self,
        team_ids: list[str] | None = None,
        batch_size: int = 512,
        progress: Callable[[int], None] | None = None,
    ) -> ReindexReport:
        teams = team_ids or [t.id for t in self._teams.list_teams()]
        listing = self._index.indexed if isinstance(self._index, ListableIndex) else None
        total = 0
        for team_id in teams:
            if listing is None:
                self._index.clear_team(team_id)
            seen: set[str] = set()
            rows = self._memories.iter_team(team_id)
            while batch := list(islice(rows, batch_size)):
                self._indexer.index(batch)
                seen.update(m.id for m in batch)
                total += len(batch)
                if progress:
                    progress(len(batch))
            if listing is not None:
                gone = sorted(set(listing(team_id)) - seen)
                if gone:
                    self._index.remove(team_id, gone)
        return ReindexReport(teams=len(teams), memories=total)

    @property
    def can_check(self) -> bool:
        return self._audit is not None or isinstance(self._index, ListableIndex)

    def check(self, team_ids: list[str] | None = None) -> DriftReport:
        if not self.can_check:
            raise NotImplementedError("this deployment's index cannot be checked; run a full reindex")
        teams = team_ids or [t.id for t in self._teams.list_teams()]
        return DriftReport({team_id: self._drift(team_id) for team_id in teams})

    def _drift(self, team_id: str) -> IndexDrift:
        """The audit's answer where there is one (local: SQL); else the memories read against what the
        index lists (AWS: a query of the team's partition and a scroll of its documents)."""
        if self._audit is not None:
            return self._audit.drift(team_id)
        assert isinstance(self._index, ListableIndex)
        indexed = self._index.indexed(team_id)
        stored = {m.id: m.is_current for m in self._memories.iter_team(team_id)}
        return IndexDrift(
            missing=tuple(sorted(set(stored) - set(indexed))),
            orphaned=tuple(sorted(set(indexed) - set(stored))),
            stale=tuple(sorted(i for i, current in stored.items() if i in indexed and indexed[i] != current)),
        )

    def repair(self, team_ids: list[str] | None = None) -> DriftReport:
        """Index what is missing or stale and drop what is orphaned; returns what was found."""
        report = self.check(team_ids)
        for team_id, drift in report.teams.items():
            ids = [*drift.missing, *drift.stale]
            for start in range(0, len(ids), 512):
                found = self._memories.get_many(team_id, ids[start : start + 512])
                self._indexer.index(list(found.values()))
            if drift.orphaned:
                self._index.remove(team_id, list(drift.orphaned))
        return report

"""Rebuild the search index from the source of truth (SQLite locally, DynamoDB in AWS), or mend it.

The index is derived data. `rebuild` indexes every memory again, superseded ones included (they stay
searchable on request, and the filter keeps them out by default), then drops entries of memories that
are gone; vectors the index already holds for the same model and text are reused (`CachingEmbedder`),
so a rebuild with an unchanged model embeds nothing. An index that cannot list its entries is cleared
first instead. `check` reports where index and memories disagree and `repair` mends exactly that; local
mode repairs at every start-up.

After a model change (the embedder's version differs from the vectors an index that keeps models apart,
`VersionedIndex`, serves), `rebuild` builds the new model's vectors beside the served ones instead:
batch by batch, each committed with the build's progress, so a killed run resumes where it stopped;
recall keeps comparing queries with the old model's complete set meanwhile. Writes made during the build
are caught up in further passes, and one transaction swaps the new set in once every entry has its
vector (`swap` refuses while any lacks one). Every memory is then stamped with the served model's
`embedding_version`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

from cairn.domain.errors import InvalidInput
from cairn.domain.ports import (
    BuildProgress,
    Embedder,
    EmbeddingStamps,
    IndexAudit,
    IndexDrift,
    ListableIndex,
    MemoryRepository,
    SearchIndex,
    TeamRepository,
    VersionCounts,
    VersionedIndex,
)
from cairn.services.indexing import MemoryIndexer
from cairn.services.memories import Indexer


@dataclass(frozen=True, slots=True)
class ReindexReport:
    teams: int
    memories: int  # memories embedded (or looked up) by this run
    version: str | None = None  # the model whose vectors are served after it
    swapped: bool = False  # a model change: the new model's vectors were swapped in
    resumed_batches: int = 0  # batches a killed run had committed, not done again


@dataclass(frozen=True, slots=True)
class ReindexStatus:
    index: VersionCounts | None  # None: the index does not keep models apart (AWS)
    stamps: dict[str | None, int]  # memories per `embedding_version` (None: not stamped yet)
    model: str | None  # the configured model's version


@dataclass(frozen=True, slots=True)
class ReindexProgress:
    """A model-change reindex as the UI shows it, whichever engine runs it: locally the index's vectors of
    the new model (`done` of `total` records), in AWS the Distributed Map's pages."""

    served: str | None  # the model whose vectors recall compares queries with
    building: str | None  # the model being built, until the swap; None when no rebuild is on
    done: int
    total: int
    unit: str  # "records" | "pages"
    state: str | None = None  # AWS: building | swapped | None (never run)
    started_at: str | None = None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


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
        target: Embedder | None = None,
    ) -> None:
        self._teams = teams
        self._memories = memories
        self._index = index
        self._indexer = indexer
        self._audit = audit
        # the configured model, which a model change builds with (the served one may still be older)
        self._target = target

    def status(self) -> ReindexStatus:
        stamps: dict[str | None, int] = {}
        if isinstance(self._memories, EmbeddingStamps):
            for team in self._teams.list_teams():
                for version, n in self._memories.embedding_versions(team.id).items():
                    stamps[version] = stamps.get(version, 0) + n
        counts = self._index.version_counts() if isinstance(self._index, VersionedIndex) else None
        return ReindexStatus(counts, stamps, self._target.version if self._target is not None else None)

    def progress(self) -> ReindexProgress | None:
        """None where the index does not keep models apart (AWS: `DistributedReindex.progress`)."""
        counts = self.status().index
        if counts is None:
            return None
        done = counts.staged if counts.building else counts.served
        return ReindexProgress(counts.active, counts.building, done, counts.docs, "records")

    def model_change(self) -> bool:
        """Whether the configured model differs from the one whose vectors the index serves."""
        if self._target is None or not isinstance(self._index, VersionedIndex):
            return False
        active = self._index.active_version()
        return active is not None and active != self._target.version

    def rebuild(
        self,
        team_ids: list[str] | None = None,
        batch_size: int = 512,
        progress: Callable[[int], None] | None = None,
        total: Callable[[int, int], None] | None = None,
    ) -> ReindexReport:
        """`progress` is told each batch's size as it commits; `total` (done already, to do) once the
        work is known."""
        if self.model_change():
            if team_ids:
                raise InvalidInput("a model change re-embeds every team: run the reindex without --team")
            return self._change_model(batch_size, progress, total)
        teams = team_ids or [t.id for t in self._teams.list_teams()]
        if total is not None and isinstance(self._index, ListableIndex):
            total(0, sum(len(self._index.indexed(t)) for t in teams))
        listing = self._index.indexed if isinstance(self._index, ListableIndex) else None
        count = 0
        for team_id in teams:
            if listing is None:
                self._index.clear_team(team_id)
            seen: set[str] = set()
            rows = self._memories.iter_team(team_id)
            while batch := list(islice(rows, batch_size)):
                self._indexer.index(batch)
                seen.update(m.id for m in batch)
                count += len(batch)
                if progress:
                    progress(len(batch))
            if listing is not None:
                gone = sorted(set(listing(team_id)) - seen)
                if gone:
                    self._index.remove(team_id, gone)
        version = self._index.active_version() if isinstance(self._index, VersionedIndex) else None
        if version is not None:
            self._stamp(teams, version)
        return ReindexReport(teams=len(teams), memories=count, version=version)

    def _change_model(
        self,
        batch_size: int,
        progress: Callable[[int], None] | None,
        total: Callable[[int, int], None] | None,
    ) -> ReindexReport:
        assert self._target is not None and isinstance(self._index, VersionedIndex)
        index, version = self._index, self._target.version
        build: BuildProgress = index.begin_version(version)
        self.repair()  # entries of memories gone are dropped, missing ones added (with the served model)
        indexer = MemoryIndexer(index, self._target, batch_size)
        if total is not None:
            total(build.staged, index.unstaged_count(version))
        done = 0
        while True:
            teams = [t.id for t in self._teams.list_teams()]
            for team_id in teams:
                after = 0
                while pending := index.unstaged(team_id, version, batch_size, after):
                    after = pending[-1].rowid
                    found = self._memories.get_many(team_id, [p.memory_id for p in pending])
                    gone = [p.memory_id for p in pending if p.memory_id not in found]
                    if gone:  # deleted since they were listed
                        index.remove(team_id, gone)
                    kept = [p for p in pending if p.memory_id in found]
                    docs = indexer.prepare([found[p.memory_id] for p in kept])
                    index.stage(version, list(zip(kept, docs, strict=True)))
                    done += len(pending)
                    if progress:
                        progress(len(pending))
            # writes made meanwhile (filed with the served model) are listed again by the next pass
            if index.swap(version):
                break
        self._stamp(teams, version)
        return ReindexReport(
            teams=len(teams), memories=done, version=version, swapped=True, resumed_batches=build.batches
        )

    def _stamp(self, teams: list[str], version: str) -> None:
        if isinstance(self._memories, EmbeddingStamps):
            for team_id in teams:
                self._memories.stamp_embedding_version(team_id, version)

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

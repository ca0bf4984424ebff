"""Procedures with success rates: list them best first, and count the outcomes agents report.

Counts live in the procedure's details (`success_count`, `failure_count`, `last_outcome`,
`last_outcome_at`), the same keys the tool-mining stage of the learning pipeline writes. Ranking uses
a Laplace-smoothed rate so one lucky run does not outrank a procedure that worked 20 times out of 21.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from cairn.domain.audit import AuditAction
from cairn.domain.codec import dt_out
from cairn.domain.errors import InvalidInput
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Principal, utcnow
from cairn.services.memories import MemoryPatch, MemoryService

_SCAN_LIMIT = 500


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class ProcedureStats:
    memory: Memory
    success_count: int
    failure_count: int

    @property
    def runs(self) -> int:
        return self.success_count + self.failure_count

    @property
    def success_rate(self) -> float | None:
        """Observed rate; None before the first reported run."""
        return self.success_count / self.runs if self.runs else None

    @property
    def ranking_rate(self) -> float:
        """Laplace-smoothed rate: (s + 1) / (n + 2), 0.5 for an untried procedure."""
        return (self.success_count + 1) / (self.runs + 2)


def stats_of(memory: Memory) -> ProcedureStats:
    return ProcedureStats(
        memory=memory,
        success_count=_count(memory.details.get("success_count")),
        failure_count=_count(memory.details.get("failure_count")),
    )


def _count(value: object) -> int:
    try:
        return max(int(value), 0)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


class ProcedureService:
    def __init__(self, memories: MemoryService, clock: Callable[[], datetime] = utcnow) -> None:
        self._memories = memories
        self._clock = clock

    def list(self, caller: Principal, project: str | None = None, limit: int = 20) -> list[ProcedureStats]:
        """Current procedures of the project (and team-global ones), best smoothed success rate first."""
        if not 1 <= limit <= 100:
            raise InvalidInput("limit must be between 1 and 100")
        flt = MemoryFilter(project=project, kinds=frozenset({MemoryKind.PROCEDURE}))
        page = self._memories.list(caller, flt, limit=_SCAN_LIMIT)
        ranked = sorted(
            (stats_of(m) for m in page.items),
            key=lambda s: (-s.ranking_rate, -s.runs, -s.memory.confidence, s.memory.id),
        )
        return ranked[:limit]

    def record_outcome(self, caller: Principal, procedure_id: str, outcome: Outcome) -> ProcedureStats:
        """Add one success or failure to a procedure's counts."""
        memory = self._memories.get(caller, procedure_id)
        if memory.kind is not MemoryKind.PROCEDURE:
            raise InvalidInput(f"memory {procedure_id} is a {memory.kind.value}, not a procedure")
        stats = stats_of(memory)
        successes = stats.success_count + (outcome is Outcome.SUCCESS)
        failures = stats.failure_count + (outcome is Outcome.FAILURE)
        details = {
            **memory.details,
            "success_count": successes,
            "failure_count": failures,
            "last_outcome": outcome.value,
            "last_outcome_at": dt_out(self._clock()),
        }
        updated = self._memories.update(
            caller, procedure_id, MemoryPatch(details=details), AuditAction.OUTCOME
        )
        return stats_of(updated)

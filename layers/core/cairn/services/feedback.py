"""Feedback on a memory from the agent that used it: useful, wrong or stale.

Each signal moves `confidence` (useful up a little; wrong down; stale down hard, because an outdated
memory misleads more than a missing one) and is counted in `details["feedback"]`, so ranking and
later curation can see how a memory has fared. Nothing is deleted here: correcting a wrong memory is
`supersede`, removing it is `forget`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from cairn.domain.audit import AuditAction
from cairn.domain.codec import dt_out
from cairn.domain.models import Memory, Principal, utcnow
from cairn.services.memories import MemoryPatch, MemoryService


class Signal(StrEnum):
    USEFUL = "useful"
    WRONG = "wrong"
    STALE = "stale"


# confidence change per signal, applied then clamped to [0, 1]
CONFIDENCE_STEP: dict[Signal, float] = {
    Signal.USEFUL: +0.1,
    Signal.WRONG: -0.25,
    Signal.STALE: -0.4,
}


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    memory: Memory
    previous_confidence: float


class FeedbackService:
    def __init__(self, memories: MemoryService, clock: Callable[[], datetime] = utcnow) -> None:
        self._memories = memories
        self._clock = clock

    def give(
        self, caller: Principal, memory_id: str, signal: Signal, note: str | None = None
    ) -> FeedbackResult:
        memory = self._memories.get(caller, memory_id)
        previous = dict(memory.details.get("feedback") or {})
        counts = {s.value: int(previous.get(s.value, 0) or 0) for s in Signal}
        counts[signal.value] += 1
        feedback: dict[str, object] = {
            **counts,
            "last": signal.value,
            "last_at": dt_out(self._clock()),
            "last_by": caller.member,
        }
        if note:
            feedback["last_note"] = note
        confidence = round(min(max(memory.confidence + CONFIDENCE_STEP[signal], 0.0), 1.0), 4)
        updated = self._memories.update(
            caller,
            memory_id,
            MemoryPatch(confidence=confidence, details={**memory.details, "feedback": feedback}),
            AuditAction.FEEDBACK,
        )
        return FeedbackResult(memory=updated, previous_confidence=memory.confidence)

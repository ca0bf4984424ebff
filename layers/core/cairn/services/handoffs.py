"""Handoffs and checkpoints: where an agent left off, stored as memories of kind `handoff`.

A handoff is single-use per project and agent: saving a new one supersedes the one still waiting for
the same agent (never another agent's, even with the same words), and reading it with `consume=True`
hands it over once, by a conditional write that only one of two concurrent readers wins. The
session-start context (`services/context/`) delivers the same handoffs: it closes a delivered
handoff's validity; this module, which has only `MemoryService` to write with, marks it delivered in
its details. Both count either mark as "handed over". Agent names are normalised the way the
context service does it.

A checkpoint is a named snapshot the agent can list and restore any number of times; it carries the
tag "checkpoint" and `details["checkpoint"] = True`, is never consumed, and a closed validity that is
not a supersession (a delivery) does not hide it.

Details keys: handoff - agent, next_steps, open_questions, errors, asked_before, reported, delivered_at,
delivered_to, consumed_by; checkpoint - checkpoint=True, name, names (aliases), agent, next_steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from cairn.domain.codec import dt_out
from cairn.domain.details import bounded
from cairn.domain.errors import Forbidden, InvalidInput, NotFound
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    aware,
    utcnow,
)
from cairn.services.agents import normalise_agent, normalise_agent_or_none
from cairn.services.memories import MemoryPatch, MemoryService, NewMemory

CHECKPOINT_TAG = "checkpoint"
HANDOFF_TAG = "handoff"
_SCAN_LIMIT = 200  # handoffs waiting per project are few; this bounds a pathological backlog


def is_checkpoint(memory: Memory) -> bool:
    return bool(memory.details.get("checkpoint")) or CHECKPOINT_TAG in memory.tags


def checkpoint_names(memory: Memory) -> list[str]:
    names = [memory.details.get("name"), *(memory.details.get("names") or [])]
    return list(dict.fromkeys(n for n in names if n))


def is_waiting_handoff(memory: Memory, agent: str | None = None) -> bool:
    """A current, unconsumed handoff (not a checkpoint), for `agent` when one is given."""
    if memory.kind is not MemoryKind.HANDOFF or not memory.is_current or is_checkpoint(memory):
        return False
    if memory.details.get("delivered_at"):
        return False
    return agent is None or handoff_agent(memory) in (None, agent)


def handoff_agent(memory: Memory) -> str | None:
    return normalise_agent_or_none(memory.details.get("agent") or memory.provenance.agent)


@dataclass(frozen=True, slots=True)
class HandoffNote:
    project: str
    summary: str
    agent: str | None = None
    next_steps: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    session_id: str | None = None
    asked_before: tuple[str, ...] = ()  # the session's requests before its last, in order
    reported: tuple[str, ...] = ()  # what the agent reported as each request's outcome, in order
    said_at: datetime | None = None  # when the session ran (the pipeline's); None: now


@dataclass(frozen=True, slots=True)
class CheckpointNote:
    project: str
    name: str
    content: str
    agent: str | None = None
    next_steps: tuple[str, ...] = ()
    session_id: str | None = None


class HandoffService:
    def __init__(self, memories: MemoryService, clock: Callable[[], datetime] = utcnow) -> None:
        self._memories = memories
        self._clock = clock

    # --- handoffs -----------------------------------------------------------------------------
    def save_handoff(self, caller: Principal, note: HandoffNote) -> Memory:
        """Store the handoff for (project, agent); a waiting one for the same pair is superseded."""
        agent = normalise_agent(note.agent) if note.agent else None
        new = NewMemory(
            kind=MemoryKind.HANDOFF,
            content=note.summary,
            project=note.project,
            title=f"Handoff for {agent}" if agent else "Handoff",
            tags=(HANDOFF_TAG,),
            details={
                "agent": agent,
                "next_steps": list(note.next_steps),
                "open_questions": list(note.open_questions),
                "errors": list(note.errors),
                "asked_before": list(note.asked_before),
                "reported": list(note.reported),
            },
            provenance=Provenance(session_id=note.session_id, agent=agent),
            said_at=note.said_at,
        )
        listed = self._listed(caller, note.project)
        if (later := _said_later(listed, agent, new.said_at)) is not None:
            # a session learned after a later one (a long one, a retried upload, a backfill): the later
            # session's handoff is where the work stands; this one's session is history (its reflection)
            return later
        waiting = self._waiting(caller, note.project, agent, exact_agent=True, listed=listed)
        if waiting:
            _, saved = self._memories.supersede(caller, waiting[0].id, new)
            return saved
        saved = self._memories.remember(caller, new)
        if saved.kind is not MemoryKind.HANDOFF or is_checkpoint(saved) or handoff_agent(saved) != agent:
            # the same words are another agent's handoff (or a checkpoint): each agent gets its own
            return self._memories.remember(caller, new, dedup=False)
        if saved.details.get("delivered_at"):
            # exact dedup handed back an identical handoff that was already read: arm it again
            saved = self._memories.update(caller, saved.id, MemoryPatch(details=dict(new.details)))
        return saved

    def take_handoff(
        self, caller: Principal, project: str, agent: str | None = None, consume: bool = True
    ) -> Memory | None:
        """The newest waiting handoff, or None; `consume` marks it read so it is handed over once."""
        if consume and not caller.allows(KeyScope.WRITE):
            raise Forbidden(
                "consuming a handoff needs a key with the 'write' scope; pass consume=false to peek"
            )
        agent = normalise_agent(agent) if agent else None
        waiting = self._waiting(caller, project, agent)
        if not waiting:
            return None
        if not consume:
            return waiting[0]
        for handoff in waiting:  # newest first; one another caller took a moment ago is skipped
            details = {
                **handoff.details,
                "delivered_at": dt_out(self._clock()),
                "delivered_to": agent,
                "consumed_by": caller.member,
            }
            taken = self._memories.mark_delivered(caller, handoff, details)
            if taken is not None:
                return taken
        return None

    # --- checkpoints --------------------------------------------------------------------------
    def save_checkpoint(self, caller: Principal, note: CheckpointNote) -> Memory:
        name = note.name.strip()
        if not name:
            raise InvalidInput("a checkpoint needs a name")
        agent = normalise_agent(note.agent) if note.agent else None
        saved = self._memories.remember(
            caller,
            NewMemory(
                kind=MemoryKind.HANDOFF,
                content=note.content,
                project=note.project,
                title=f"Checkpoint: {name}",
                tags=(CHECKPOINT_TAG,),
                details={
                    "checkpoint": True,
                    "name": name,
                    "agent": agent,
                    "next_steps": list(note.next_steps),
                },
                provenance=Provenance(session_id=note.session_id, agent=agent),
            ),
        )
        names = checkpoint_names(saved)
        if name not in names:
            # exact dedup returned the same snapshot saved under another name: answer to both names
            details = {**saved.details, "names": [*names, name]}
            saved = self._memories.update(caller, saved.id, MemoryPatch(details=details))
        return saved

    def list_checkpoints(self, caller: Principal, project: str, limit: int = 20) -> list[Memory]:
        """Newest first; a checkpoint closed by a context delivery is still listed (it is never consumed)."""
        flt = replace(self._filter(project, CHECKPOINT_TAG), include_superseded=True)
        page = self._memories.list(caller, flt, limit=limit)
        return [m for m in page.items if is_checkpoint(m) and m.superseded_by is None]

    def restore_checkpoint(
        self,
        caller: Principal,
        project: str | None = None,
        checkpoint_id: str | None = None,
        name: str | None = None,
    ) -> Memory:
        """A checkpoint by id, or the newest one of `project` with `name` (checkpoints are not consumed)."""
        if checkpoint_id:
            memory = self._memories.get(caller, checkpoint_id)
            if memory.kind is not MemoryKind.HANDOFF or not is_checkpoint(memory):
                raise NotFound(f"no checkpoint {checkpoint_id}")
            return memory
        if not (project and name):
            raise InvalidInput("give a checkpoint id, or a project and a checkpoint name")
        for memory in self.list_checkpoints(caller, project, limit=_SCAN_LIMIT):
            if name.strip() in checkpoint_names(memory):
                return memory
        raise NotFound(f"no checkpoint named {name!r} in project {project!r}")

    # --- helpers ------------------------------------------------------------------------------
    def _listed(self, caller: Principal, project: str) -> Sequence[Memory]:
        """The project's current handoffs and checkpoints, newest written first."""
        return self._memories.list(caller, self._filter(project, None), limit=_SCAN_LIMIT).items

    def _waiting(
        self,
        caller: Principal,
        project: str,
        agent: str | None,
        exact_agent: bool = False,
        listed: Sequence[Memory] | None = None,
    ) -> Sequence[Memory]:
        """The waiting handoffs, the latest said first (`said_first`)."""
        listed = self._listed(caller, project) if listed is None else listed
        found = [m for m in listed if is_waiting_handoff(m, agent)]
        if exact_agent:
            found = [m for m in found if handoff_agent(m) == agent]
        return said_first(found)

    @staticmethod
    def _filter(project: str, tag: str | None) -> MemoryFilter:
        if not project or not project.strip():
            raise InvalidInput("a project is required")
        return MemoryFilter(
            project=project,
            include_team_scope=False,
            kinds=frozenset({MemoryKind.HANDOFF}),
            tags=frozenset({tag}) if tag else None,
        )


def handoff_view(memory: Memory) -> dict[str, Any]:
    """The fields an agent needs to resume, without storage bookkeeping."""
    d = bounded(memory.details)
    return {
        "id": memory.id,
        "project": memory.project,
        "agent": handoff_agent(memory),
        "summary": memory.content,
        "next_steps": list(d.get("next_steps") or []),
        "open_questions": list(d.get("open_questions") or []),
        "errors": list(d.get("errors") or []),
        "asked_before": list(d.get("asked_before") or []),
        "reported": list(d.get("reported") or []),
        "name": d.get("name"),
        "names": checkpoint_names(memory) if is_checkpoint(memory) else None,
        "created_at": dt_out(memory.created_at),
        "session_id": memory.provenance.session_id,
    }


def said_first(handoffs: Sequence[Memory]) -> list[Memory]:
    """Handoffs, the one a session that ran last left first; of one time, the last written first."""
    return sorted(handoffs, key=lambda m: (aware(m.valid_from), aware(m.created_at), m.id), reverse=True)


def _said_later(listed: Sequence[Memory], agent: str | None, said_at: datetime | None) -> Memory | None:
    """A current handoff of this agent among `listed`, delivered or not, that a session which ran after
    `said_at` left; None when `said_at` is unknown (an agent's own handoff is the newest there is)."""
    if said_at is None:
        return None
    mine = [m for m in listed if m.is_current and not is_checkpoint(m) and handoff_agent(m) == agent]
    later = [m for m in mine if aware(m.valid_from) > aware(said_at)]
    return said_first(later)[0] if later else None

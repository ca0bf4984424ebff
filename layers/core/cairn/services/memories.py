"""Remember, get, list, update, forget, supersede and relate memories, confined to the caller's team.

Every write goes to the repository (the source of truth) and then to the indexer when one is wired
(local mode indexes inline; in AWS the DynamoDB stream feeds the indexer Lambda, so none is wired).
With a `unit` of work (local mode: one SQLite transaction) the memory and its index entries are written
as one: the embedding is computed first, outside it, then both commit together or not at all, so a
crash can never leave a stored memory unsearchable.
Corrections never overwrite: `supersede` closes the old memory's validity and links the new one.
Every change is recorded in the audit trail with the caller (inside the same unit where there is one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from cairn.domain.audit import AuditAction
from cairn.domain.details import check_details
from cairn.domain.errors import Forbidden, InvalidInput, NotFound
from cairn.domain.ids import is_valid_id, new_id
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryCount,
    MemoryFilter,
    MemoryKind,
    Page,
    Principal,
    Provenance,
    Relation,
    Scope,
    aware,
    content_hash,
    utcnow,
)
from cairn.domain.ports import (
    AtomicSupersede,
    BusinessMetric,
    MemoryRepository,
    Metrics,
    NoMetrics,
    RelationRepository,
)
from cairn.services.audit import AuditTrail

MAX_CONTENT_CHARS = 20_000
PREDICATES = frozenset({"uses", "fixes", "caused-by", "supersedes", "part-of", "relates-to", "contradicts"})


class Indexer(Protocol):
    def index(self, memories: Sequence[Memory]) -> None: ...

    def prepare(self, memories: Sequence[Memory]) -> Sequence[Any]:
        """The index entries of `memories`, embedded: slow, so done before the write's unit."""

    def write(self, docs: Sequence[Any]) -> None: ...

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None: ...


@dataclass(frozen=True, slots=True)
class NewMemory:
    kind: MemoryKind
    content: str
    scope: Scope = Scope.PROJECT
    project: str | None = None
    title: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    confidence: float = 0.5
    details: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    said_at: datetime | None = None  # when its session ran (`Memory.valid_from`); None: now


@dataclass(frozen=True, slots=True)
class MemoryPatch:
    """Fields to change; None leaves a field as it is."""

    content: str | None = None
    title: str | None = None
    tags: tuple[str, ...] | None = None
    pinned: bool | None = None
    confidence: float | None = None
    details: Mapping[str, Any] | None = None
    provenance: Provenance | None = None  # the pipeline's own: which session and tools said it


def new_memory(request: Mapping[str, Any], old: Memory | None = None) -> NewMemory:
    """The one builder of a new memory from a request's fields (REST body, MCP arguments, web form);
    `remember` or `supersede` then gives it the caller's team and, when personal, the caller as owner.

    A field absent or None takes its default, or with `old` (the memory a correction replaces) the old
    memory's: the replacement keeps its scope, project and pin, and its provenance less the old lines.
    Provenance is `provenance` (a mapping) or `session_id` and `agent`; a `reason` for a correction is
    kept in details as `supersede_reason`."""
    given = {k: v for k, v in request.items() if v is not None}
    if old is None:
        base: Mapping[str, Any] = {"provenance": Provenance()}
    else:
        base = {name: getattr(old, name) for name in _NEW_FIELDS}
        base["provenance"] = replace(old.provenance, line_start=None, line_end=None)
    built = {**base, **{name: given[name] for name in _NEW_FIELDS if name in given}}
    if isinstance(built["provenance"], Mapping):
        built["provenance"] = Provenance(**built["provenance"])
    elif "provenance" not in given and ("session_id" in given or "agent" in given):
        built["provenance"] = Provenance(session_id=given.get("session_id"), agent=given.get("agent"))
    built["tags"] = tuple(built.get("tags", ()))
    built["details"] = dict(built.get("details", {}))
    if given.get("reason"):
        built["details"]["supersede_reason"] = given["reason"]
    return NewMemory(**built)


# what a request may set; when it was said is now for what a caller writes (a correction too)
_NEW_FIELDS = tuple(f.name for f in fields(NewMemory) if f.name != "said_at")


def require(caller: Principal, needed: KeyScope) -> None:
    if not caller.allows(needed):
        raise Forbidden(f"this needs a key with the '{needed.value}' scope")


class MemoryService:
    def __init__(
        self,
        memories: MemoryRepository,
        relations: RelationRepository,
        indexer: Indexer | None = None,
        clock: Callable[[], datetime] = utcnow,
        unit: Callable[[], AbstractContextManager[Any]] | None = None,
        metrics: Metrics | None = None,
        audit: AuditTrail | None = None,
    ) -> None:
        self._memories = memories
        self.audit = audit or AuditTrail()
        self._relations = relations
        self._indexer = indexer
        self._clock = clock
        self._unit = unit or nullcontext
        self._metrics = metrics or NoMetrics()

    # --- writes -------------------------------------------------------------------------------
    def remember(self, caller: Principal, new: NewMemory, *, dedup: bool = True) -> Memory:
        """Store a memory; an identical current one (same kind and content) is returned instead, unless
        `dedup` is False (a handoff for another agent that happens to say the same)."""
        return self.remember_many(caller, [new], dedup=dedup)[0]

    def remember_many(
        self, caller: Principal, batch: Sequence[NewMemory], *, dedup: bool = True
    ) -> list[Memory]:
        require(caller, KeyScope.WRITE)
        out: list[Memory] = []
        created: dict[tuple, Memory] = {}  # with dedup, an identical one earlier in the batch counts too
        for new in batch:
            memory = self._build(caller, new)
            key = (memory.project, memory.content_hash, memory.scope, memory.owner) if dedup else len(out)
            existing = (created.get(key) or self._existing(memory)) if dedup else None
            out.append(existing or memory)
            if existing is None:
                created[key] = memory
        if not created:
            return out
        docs = self._indexer.prepare(list(created.values())) if self._indexer else []
        with self._unit():
            for memory in created.values():
                self._memories.add(memory)
            if self._indexer:
                self._indexer.write(docs)
            self.audit.record_memories(caller, AuditAction.WRITE, list(created.values()))
        self._metrics.count(BusinessMetric.MEMORIES_WRITTEN, len(created))
        return out

    def _existing(self, memory: Memory) -> Memory | None:
        found = self._memories.find_by_hash(memory.team_id, memory.project, memory.content_hash)
        if found is not None and found.scope == memory.scope and found.owner == memory.owner:
            return found
        return None

    def update(
        self, caller: Principal, memory_id: str, patch: MemoryPatch, action: AuditAction = AuditAction.UPDATE
    ) -> Memory:
        """`action` names the change in the audit trail (feedback and outcomes are updates too)."""
        require(caller, KeyScope.WRITE)
        current = self.writable(caller, memory_id)
        changes: dict[str, Any] = {k: v for k, v in _patch_fields(patch).items() if v is not None}
        if "content" in changes:
            changes["content"] = _clean_content(changes["content"])
            changes["content_hash"] = content_hash(current.kind, changes["content"])
        if "confidence" in changes:
            _check_confidence(changes["confidence"])
        if "details" in changes:
            check_details(changes["details"])
        updated = replace(current, **changes, updated_at=self._clock())
        docs = self._indexer.prepare([updated]) if self._indexer else []
        with self._unit():
            self._memories.put(updated)
            if self._indexer:
                self._indexer.write(docs)
            self._record(caller, action, updated, fields=sorted(changes))
        return updated

    def mark_delivered(self, caller: Principal, memory: Memory, details: Mapping[str, Any]) -> Memory | None:
        """Store `memory` with `details` (which record its delivery) only if nobody delivered it first:
        the atomic step behind "a handoff is handed over once". None when another caller won."""
        require(caller, KeyScope.WRITE)
        caller.check_project(memory.project)
        check_details(details)
        updated = replace(memory, details=dict(details), updated_at=self._clock())
        docs = self._indexer.prepare([updated]) if self._indexer else []
        with self._unit():
            if not self._memories.put_if_undelivered(updated):
                return None
            if self._indexer:
                self._indexer.write(docs)
            self._record(caller, AuditAction.DELIVER, updated)
        return updated

    def forget(self, caller: Principal, memory_id: str) -> None:
        require(caller, KeyScope.WRITE)
        memory = self.writable(caller, memory_id)  # NotFound for other teams' or others' personal memories
        with self._unit():
            self._memories.delete(caller.team_id, memory_id)
            if self._indexer:
                self._indexer.remove(caller.team_id, [memory_id])
            self._record(caller, AuditAction.FORGET, memory)

    def supersede(self, caller: Principal, old_id: str, new: NewMemory) -> tuple[Memory, Memory]:
        """Replace `old_id` by a new memory; the old one stays in history, closed and linked."""
        require(caller, KeyScope.WRITE)
        old = self.writable(caller, old_id)
        if not old.is_current:
            raise InvalidInput(f"memory {old_id} is already superseded by {old.superseded_by}")
        now = self._clock()
        replacement = self._build(caller, new)
        closed = replace(old, valid_to=now, superseded_by=replacement.id, updated_at=now)
        docs = self._indexer.prepare([replacement, closed]) if self._indexer else []
        link = Relation(
            id=new_id("rel"),
            team_id=caller.team_id,
            source_id=replacement.id,
            predicate="supersedes",
            target_id=old.id,
            created_at=now,
            valid_from=now,
        )
        if isinstance(self._memories, AtomicSupersede):
            # one conditional transaction: a concurrent supersede of the same memory gets Conflict
            self._memories.supersede(closed, replacement, link)
            if self._indexer:
                self._indexer.write(docs)
            self._record_supersede(caller, closed, replacement)
            self._metrics.count(BusinessMetric.MEMORIES_WRITTEN)
            return closed, replacement
        with self._unit():
            self._memories.add(replacement)
            self._memories.put(closed)
            self._relations.add(link)
            if self._indexer:
                self._indexer.write(docs)
            self._record_supersede(caller, closed, replacement)
        self._metrics.count(BusinessMetric.MEMORIES_WRITTEN)
        return closed, replacement

    def close(
        self,
        caller: Principal,
        memory_id: str,
        details: Mapping[str, Any],
        superseded_by: str | None = None,
    ) -> Memory:
        """End a memory's validity without a new memory: superseded by one that already exists (the
        dream pass folds a restatement or an outdated value into it) or closed as done (an open item a
        later session finished). It stays in history and search with `include_superseded`. One write,
        so a pass killed around it either closed the memory or did not; an already closed one is
        returned as it is."""
        require(caller, KeyScope.WRITE)
        current = self.get(caller, memory_id)
        if not current.is_current:
            return current
        check_details(details)
        now = self._clock()
        closed = replace(
            current, valid_to=now, superseded_by=superseded_by, details=dict(details), updated_at=now
        )
        docs = self._indexer.prepare([closed]) if self._indexer else []
        with self._unit():
            self._memories.put(closed)
            if self._indexer:
                self._indexer.write(docs)
        return closed

    def relate(
        self, caller: Principal, source_id: str, predicate: str, target_id: str, weight: float = 1.0
    ) -> Relation:
        require(caller, KeyScope.WRITE)
        if predicate not in PREDICATES:
            raise InvalidInput(f"unknown predicate {predicate!r}", allowed=sorted(PREDICATES))
        if source_id == target_id:
            raise InvalidInput("a memory cannot relate to itself")
        self.writable(caller, source_id)
        self.writable(caller, target_id)
        now = self._clock()
        relation = Relation(
            id=new_id("rel"),
            team_id=caller.team_id,
            source_id=source_id,
            predicate=predicate,
            target_id=target_id,
            created_at=now,
            valid_from=now,
            weight=weight,
        )
        self._relations.add(relation)
        self.audit.record(
            caller,
            AuditAction.RELATE,
            source_id,
            details={"relation": relation.id, "predicate": predicate, "target": target_id},
        )
        return relation

    def unrelate(self, caller: Principal, relation_id: str) -> None:
        require(caller, KeyScope.WRITE)
        _check_id(relation_id, "rel")
        relation = self._relations.get(caller.team_id, relation_id)
        if relation is None:
            raise NotFound(f"no relation {relation_id}")
        if caller.projects is not None:  # a limited key unlinks only what it could have linked
            if not self._visible(caller, relation.source_id, relation.target_id):
                raise NotFound(f"no relation {relation_id}")
            self.writable(caller, relation.source_id)
            self.writable(caller, relation.target_id)
        if not self._relations.delete(caller.team_id, relation_id):
            raise NotFound(f"no relation {relation_id}")
        self.audit.record(
            caller,
            AuditAction.UNRELATE,
            relation.source_id,
            details={"relation": relation_id, "predicate": relation.predicate, "target": relation.target_id},
        )

    # --- reads --------------------------------------------------------------------------------
    def get(self, caller: Principal, memory_id: str) -> Memory:
        require(caller, KeyScope.READ)
        _check_id(memory_id, "mem")
        memory = self._memories.get(caller.team_id, memory_id)
        if memory is None or not caller.sees(memory):
            raise NotFound(f"no memory {memory_id}")
        return memory

    def writable(self, caller: Principal, memory_id: str) -> Memory:
        """The memory, if the caller may change it: NotFound if it may not see it, Forbidden if it may
        see but not write it (a team-global memory, for a key limited to projects)."""
        memory = self.get(caller, memory_id)
        caller.check_project(memory.project)
        return memory

    def _visible(self, caller: Principal, *memory_ids: str) -> bool:
        found = self._memories.get_many(caller.team_id, memory_ids)
        return all(i in found and caller.sees(found[i]) for i in memory_ids)

    def list(
        self, caller: Principal, flt: MemoryFilter, limit: int = 50, cursor: str | None = None
    ) -> Page[Memory]:
        require(caller, KeyScope.READ)
        if not 1 <= limit <= 500:
            raise InvalidInput("limit must be between 1 and 500")
        return self._memories.list(caller.team_id, caller.confine(flt), limit, cursor)

    def counts(self, caller: Principal, flt: MemoryFilter) -> list[MemoryCount]:
        """How many memories the caller sees under `flt`, by project, scope and kind."""
        require(caller, KeyScope.READ)
        return self._memories.counts(caller.team_id, caller.confine(flt))

    def relations_of(self, caller: Principal, memory_id: str, direction: str = "both") -> list[Relation]:
        if direction not in ("in", "out", "both"):
            raise InvalidInput("direction must be in, out or both")
        self.get(caller, memory_id)
        relations = self._relations.for_memory(caller.team_id, memory_id, direction)
        if caller.projects is None:
            return relations
        # a limited key sees a link only when it sees the memory at its other end
        ends = {r.target_id if r.source_id == memory_id else r.source_id for r in relations}
        found = self._memories.get_many(caller.team_id, sorted(ends))
        seen = {i for i, m in found.items() if caller.sees(m)}
        return [r for r in relations if (r.target_id if r.source_id == memory_id else r.source_id) in seen]

    def history(self, caller: Principal, memory_id: str, limit: int = 100):
        """The audit trail of one memory the caller may see, newest first."""
        self.get(caller, memory_id)
        return self.audit.about(caller, memory_id, limit)

    # --- helpers ------------------------------------------------------------------------------
    def _record(self, caller: Principal, action: AuditAction, memory: Memory, **details: Any) -> None:
        self.audit.record_memories(caller, action, [memory], **details)

    def _record_supersede(self, caller: Principal, closed: Memory, replacement: Memory) -> None:
        self._record(caller, AuditAction.SUPERSEDE, closed, superseded_by=replacement.id)
        self._record(caller, AuditAction.WRITE, replacement, supersedes=closed.id)

    def _build(self, caller: Principal, new: NewMemory) -> Memory:
        content = _clean_content(new.content)
        _check_confidence(new.confidence)
        check_details(new.details)
        if new.scope is Scope.PROJECT and not new.project:
            raise InvalidInput("a project-scoped memory needs a project")
        caller.check_project(None if new.scope is Scope.TEAM else new.project)
        now = self._clock()
        return Memory(
            id=new_id("mem"),
            team_id=caller.team_id,
            kind=new.kind,
            content=content,
            scope=new.scope,
            project=None if new.scope is Scope.TEAM else new.project,
            owner=caller.member if new.scope is Scope.PERSONAL else None,
            title=(new.title or "").strip() or None,
            tags=tuple(dict.fromkeys(t.strip().lower() for t in new.tags if t.strip())),
            pinned=new.pinned,
            confidence=new.confidence,
            details=dict(new.details),
            # who wrote it is the caller, whatever the request says
            provenance=replace(new.provenance, member=caller.member, key_id=caller.key_id),
            valid_from=said_at(new.said_at, now),
            created_at=now,
            updated_at=now,
            content_hash=content_hash(new.kind, content),
        )


def _patch_fields(patch: MemoryPatch) -> dict[str, Any]:
    return {
        "content": patch.content,
        "title": patch.title,
        "tags": patch.tags,
        "pinned": patch.pinned,
        "confidence": patch.confidence,
        "details": patch.details,
        "provenance": patch.provenance,
    }


def _clean_content(content: str) -> str:
    content = content.strip()
    if not content:
        raise InvalidInput("content must not be empty")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"content is longer than {MAX_CONTENT_CHARS} characters")
    return content


def _check_confidence(value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise InvalidInput("confidence must be between 0 and 1")


def _check_id(value: str, prefix: str) -> None:
    if not is_valid_id(value, prefix):
        raise InvalidInput(f"{value!r} is not a valid {prefix} id")


def said_at(when: datetime | None, now: datetime) -> datetime:
    """`NewMemory.said_at` as a memory keeps it: never after `now`, in `now`'s kind of time (a naive
    time is UTC, as every time Cairn writes)."""
    if when is None:
        return now
    if now.tzinfo is None:  # a test's naive clock
        return min(aware(when).astimezone(UTC).replace(tzinfo=None), now)
    return min(aware(when), now)

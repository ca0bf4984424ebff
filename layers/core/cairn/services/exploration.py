"""Walking stored structure for an agent: the relation graph around a memory, and a session's timeline.

Both go through `MemoryService` reads with the caller's Principal, so team and personal-scope
confinement is the one the rest of the service enforces; a neighbour the caller may not see is left
out of the walk, never shown.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from cairn.domain.errors import InvalidInput, NotFound
from cairn.domain.models import KeyScope, Memory, MemoryFilter, Principal, Relation, Session
from cairn.domain.ports import SessionRepository
from cairn.services.memories import MemoryService, require
from cairn.services.sessions import visible_sessions

MAX_DEPTH = 3
MAX_NODES = 100


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    root: Memory
    nodes: tuple[tuple[Memory, int], ...]  # (memory, hops from the root), root excluded, nearest first
    edges: tuple[Relation, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class Timeline:
    session: Session | None  # None when memories name a session that was never registered
    memories: tuple[Memory, ...]  # in the order they happened in the transcript


class ExplorationService:
    def __init__(self, memories: MemoryService, sessions: SessionRepository) -> None:
        self._memories = memories
        self._sessions = sessions

    def neighbourhood(
        self,
        caller: Principal,
        memory_id: str,
        depth: int = 1,
        direction: str = "both",
        max_nodes: int = 30,
        include_expired: bool = False,
    ) -> Neighbourhood:
        """Breadth-first over relations up to `depth` hops, at most `max_nodes` memories."""
        if not 1 <= depth <= MAX_DEPTH:
            raise InvalidInput(f"depth must be between 1 and {MAX_DEPTH}")
        if not 1 <= max_nodes <= MAX_NODES:
            raise InvalidInput(f"max_nodes must be between 1 and {MAX_NODES}")
        root = self._memories.get(caller, memory_id)
        hops: dict[str, int] = {root.id: 0}
        found: dict[str, Memory] = {root.id: root}
        edges: dict[str, Relation] = {}
        queue = deque([root.id])
        truncated = False
        while queue:
            current = queue.popleft()
            if hops[current] >= depth:
                continue
            for rel in self._memories.relations_of(caller, current, direction):
                if rel.valid_to is not None and not include_expired:
                    continue
                other = rel.target_id if rel.source_id == current else rel.source_id
                if other not in found:
                    if len(found) > max_nodes:
                        truncated = True
                        continue
                    memory = self._visible(caller, other)
                    if memory is None:
                        continue
                    found[other] = memory
                    hops[other] = hops[current] + 1
                    queue.append(other)
                edges[rel.id] = rel
        nodes = sorted(
            ((m, hops[i]) for i, m in found.items() if i != root.id), key=lambda p: (p[1], p[0].id)
        )
        return Neighbourhood(root=root, nodes=tuple(nodes), edges=tuple(edges.values()), truncated=truncated)

    def sessions(
        self, caller: Principal, project: str | None = None, limit: int = 20, cursor: str | None = None
    ) -> tuple[list[Session], str | None]:
        page = visible_sessions(caller, self._sessions, project, limit, cursor)
        return list(page.items), page.next_cursor

    def timeline(self, caller: Principal, session_id: str, limit: int = 100) -> Timeline:
        """The memories learned from one session, in transcript order (line, then creation time)."""
        require(caller, KeyScope.READ)
        if not session_id.strip():
            raise InvalidInput("a session id is required")
        session = self._sessions.get(caller.team_id, session_id)
        if session is not None and not caller.sees_session(session):
            session = None  # of a project this key does not reach: as if never registered
        flt = MemoryFilter(session_id=session_id, include_superseded=True)
        page = self._memories.list(caller, flt, limit=limit)
        if session is None and not page.items:
            raise NotFound(f"no session {session_id}")
        ordered = sorted(
            page.items,
            key=lambda m: (
                m.provenance.line_start if m.provenance.line_start is not None else 1 << 62,
                m.created_at,
                m.id,
            ),
        )
        return Timeline(session=session, memories=tuple(ordered))

    def _visible(self, caller: Principal, memory_id: str) -> Memory | None:
        try:
            return self._memories.get(caller, memory_id)
        except NotFound:
            return None

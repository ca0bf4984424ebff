"""The audit trail as the services use it: record what a caller did, read a memory's or the team's trail.

Every service that changes team data holds one `AuditTrail` and records through it, with the caller's
Principal, so each surface (REST, MCP, CLI, web UI, the pipeline as its principal) is recorded once and
in the same words. Without a log (services built bare, in tests) it records nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.domain.audit import AuditAction, AuditEntry, new_entry
from cairn.domain.errors import Forbidden, InvalidInput
from cairn.domain.models import KeyScope, Memory, Page, Principal, utcnow
from cairn.domain.ports import AuditLog

MAX_PAGE = 500


class AuditTrail:
    def __init__(self, log: AuditLog | None = None, clock: Callable[[], datetime] = utcnow) -> None:
        self._log = log
        self._clock = clock

    def record(
        self,
        caller: Principal,
        action: AuditAction,
        target: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        self.record_as(caller.team_id, caller.member, caller.key_id, action, target, project, agent, details)

    def record_memories(
        self, caller: Principal, action: AuditAction, memories: Sequence[Memory], **details: Any
    ) -> None:
        """One entry per memory, written in one call (a batch of excerpts is one write, not dozens)."""
        if self._log is None or not memories:
            return
        now = self._clock()
        self._log.record(
            [
                new_entry(
                    caller.team_id,
                    caller.member,
                    caller.key_id,
                    action,
                    m.id,
                    now,
                    agent=m.provenance.agent,
                    project=m.project,
                    details=details,
                )
                for m in memories
            ]
        )

    def record_as(
        self,
        team_id: str,
        member: str,
        key_id: str,
        action: AuditAction,
        target: str,
        project: str | None = None,
        agent: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """For an actor that is not a request's Principal (a new team's first key, a received upload)."""
        if self._log is None:
            return
        entry = new_entry(
            team_id,
            member,
            key_id,
            action,
            target,
            self._clock(),
            agent=agent,
            project=project,
            details=details,
        )
        self._log.record([entry])

    # --- reads --------------------------------------------------------------------------------
    def about(self, caller: Principal, target: str, limit: int = 100) -> list[AuditEntry]:
        """One target's entries; the caller must already be allowed to see the target (a memory: its
        service's `get`), which is why this needs only the read scope."""
        if not caller.allows(KeyScope.READ):
            raise Forbidden("this needs a key with the 'read' scope")
        _check(limit)
        return [] if self._log is None else self._log.for_target(caller.team_id, target, limit)

    def team(
        self, caller: Principal, limit: int = 50, cursor: str | None = None, target: str | None = None
    ) -> Page[AuditEntry]:
        """The team's trail (or one target's), newest first: an admin's view."""
        if not caller.allows(KeyScope.ADMIN):
            raise Forbidden("this needs an admin key")
        _check(limit)
        if self._log is None:
            return Page(items=())
        if target is not None:
            page = Page(items=tuple(self._log.for_target(caller.team_id, target, limit)))
        else:
            page = self._log.list(caller.team_id, limit, cursor)
        if caller.projects is None:
            return page
        # a key limited to projects reads only their entries (a page may hold fewer; the cursor goes on)
        return Page(tuple(e for e in page.items if caller.reaches(e.project)), page.next_cursor)


def _check(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}")

"""Sessions as a caller may see them: one by id, and the listing, both confined to the key's projects.

Every surface (REST, MCP, the web UI, the transcript reader) reads sessions through these two, so a key
limited to projects never sees another project's session: by id it is NotFound, as another team's is.
"""

from __future__ import annotations

from typing import Any

from cairn.domain.audit import AuditAction
from cairn.domain.errors import InvalidInput, NotFound, Unavailable
from cairn.domain.models import KeyScope, Page, Principal, Session
from cairn.domain.ports import SessionRepository
from cairn.services.memories import require

_MAX_LIMIT = 200


def visible_session(caller: Principal, sessions: SessionRepository, session_id: str) -> Session:
    """The session, if the caller may see it; NotFound otherwise (absent, or outside the key's projects)."""
    require(caller, KeyScope.READ)
    session = sessions.get(caller.team_id, session_id)
    if session is None or not caller.sees_session(session):
        raise NotFound(f"no session {session_id}")
    return session


def visible_sessions(
    caller: Principal,
    sessions: SessionRepository,
    project: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> Page[Session]:
    """Newest first. A key limited to projects names one of them, or lists all of its projects' sessions
    (a page may then hold fewer than `limit`: the others' are skipped, the cursor goes on)."""
    require(caller, KeyScope.READ)
    if not 1 <= limit <= _MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {_MAX_LIMIT}")
    if project is not None:
        caller.check_project(project)
    elif caller.projects is not None and len(caller.projects) == 1:
        project = next(iter(caller.projects))  # one project: the repository filters, pages stay full
    page = sessions.list(caller.team_id, project, limit, cursor)
    if caller.projects is None or project is not None:
        return page
    return Page(tuple(s for s in page.items if caller.sees_session(s)), page.next_cursor)


def reprocess(caller: Principal, container: Any, session_id: str, force: bool) -> Session:
    """Learn a session again (REST and the web UI alike): the caller must write its project; the
    request is recorded in the audit trail. `container` is the bootstrap's, for its sessions, runner
    and trail."""
    require(caller, KeyScope.WRITE)
    session = visible_session(caller, container.sessions, session_id)
    caller.check_project(session.project)
    if container.runner is None:
        raise Unavailable("no pipeline runner is configured on this server")
    container.runner.start(caller.team_id, session_id, force=force)
    container.audit.record(
        caller, AuditAction.REPROCESS, session_id, project=session.project, details={"force": force}
    )
    return session

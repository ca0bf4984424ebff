"""Sessions as a caller may see them: one by id, and the listing, both confined to the key's projects.

Every surface (REST, MCP, the web UI, the transcript reader) reads sessions through these two, so a key
limited to projects never sees another project's session: by id it is NotFound, as another team's is.
"""

from __future__ import annotations

from cairn.domain.errors import InvalidInput, NotFound
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

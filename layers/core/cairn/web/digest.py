"""The digest page, "catch me up": what a project's last sessions (or those since a date) asked, learned,
changed and closed, and what is still open (`cairn.services.digest`, the same answer as the API's)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.services.digest import DEFAULT_SESSIONS, MAX_SESSIONS, parse_since
from cairn.web.common import UiRoute, Who, int_param, render, services
from cairn.web.sessions import list_sessions

router = APIRouter(route_class=UiRoute, include_in_schema=False)


@router.get("/ui/digest")
def digest_page(request: Request, who: Who) -> Response:
    q = request.query_params
    c = services(request)
    project = (q.get("project") or "").strip()
    since_text = (q.get("since") or "").strip()[:40]
    since = parse_since(since_text)
    # a date given wins over the count the form always sends
    last = None if since else int_param(q.get("sessions"), "sessions", 1, MAX_SESSIONS, DEFAULT_SESSIONS)
    found = c.digest.digest(who.principal, project, sessions=last, since=since) if project else None
    recent = list_sessions(c, who.principal, None, 100, None).items  # suggestions; any project can be typed
    return render(
        request,
        who,
        "digest.html",
        nav="digest",
        project=project,
        sessions=last or DEFAULT_SESSIONS,
        since=since_text,
        max_sessions=MAX_SESSIONS,
        d=found,
        projects=sorted({s.project for s in recent if s.project}),
    )

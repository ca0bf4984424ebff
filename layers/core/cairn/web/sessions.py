"""The sessions pages: the list, one session's pipeline stages and what it learned, reprocess, and the
redacted transcript.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.domain.models import (
    MemoryFilter,
    Principal,
    Session,
)
from cairn.domain.vocabulary import SessionStatus
from cairn.services.sessions import reprocess, visible_session, visible_sessions
from cairn.services.uploads import check_session_id
from cairn.web.common import Posted, UiRoute, Who, base_path, int_param, redirect, render, services

SESSION_PAGE = 25
STAGES = ("parse", "chunk", "extract", "consolidate", "reflect")

router = APIRouter(route_class=UiRoute, include_in_schema=False)


def list_sessions(container: Any, caller: Principal, project: str | None, limit: int, cursor: str | None):
    return visible_sessions(caller, container.sessions, project, limit, cursor)


def session_view(s: Session) -> dict[str, Any]:
    stats = dict(s.stats)
    consolidate = stats.get("consolidate") or {}
    reflect = stats.get("reflect") or {}
    learned = {
        k: consolidate.get(k) for k in ("created", "merged", "superseded", "promoted") if consolidate.get(k)
    }
    if reflect.get("procedures"):
        learned["procedures"] = reflect["procedures"]
    stages = []
    raw_error = stats.get("error")
    error = None
    if isinstance(raw_error, dict):
        error = {
            "stage": str(raw_error.get("stage") or "pipeline"),
            "code": str(raw_error.get("code") or "error"),
            "message": str(raw_error.get("message") or "failed"),
            "details": raw_error.get("details") or {},
        }
    for name in STAGES:
        if name in stats:
            state = "done"
        elif error and error.get("stage") == name:
            state = "failed"
        elif s.status == SessionStatus.PROCESSING:
            state = "pending"
        else:
            state = "not run"
        stages.append({"name": name, "state": state, "stats": stats.get(name)})
    return {"s": s, "learned": learned, "error": error, "stages": stages, "reflect": reflect}


@router.get("/ui/sessions")
def sessions(request: Request, who: Who) -> Response:
    q = request.query_params
    project = (q.get("project") or "").strip()[:300] or None
    cursor = (q.get("cursor") or "")[:500] or None
    page = list_sessions(services(request), who.principal, project, SESSION_PAGE, cursor)
    params = {"project": project} if project else {}
    next_url = (
        f"{base_path(request)}/ui/sessions?{urlencode({**params, 'cursor': page.next_cursor})}"
        if page.next_cursor
        else None
    )
    return render(
        request,
        who,
        "sessions.html",
        nav="sessions",
        sessions=[session_view(s) for s in page.items],
        project=project or "",
        next_url=next_url,
    )


def _session(c: Any, caller: Principal, session_id: str) -> Session:
    check_session_id(session_id)
    return visible_session(caller, c.sessions, session_id)


@router.get("/ui/sessions/{session_id}")
def session_page(session_id: str, request: Request, who: Who) -> Response:
    c = services(request)
    session = _session(c, who.principal, session_id)
    learned = c.memories.list(who.principal, MemoryFilter(session_id=session_id), 50).items
    return render(
        request,
        who,
        "session.html",
        nav="sessions",
        v=session_view(session),
        memories=learned,
        can_reprocess=c.runner is not None,
    )


@router.post("/ui/sessions/{session_id}/reprocess")
def reprocess_session(session_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    check_session_id(session_id)
    reprocess(who.principal, services(request), session_id, force=form.get("force") == "1")
    return redirect(request, f"/ui/sessions/{session_id}", "reprocess")


@router.get("/ui/sessions/{session_id}/transcript")
def transcript_page(session_id: str, request: Request, who: Who) -> Response:
    """The transcript lines a memory was learned from. Rendered through the container's transcript
    service when this server has one (`transcripts.lines`); otherwise the range and the API route."""
    c = services(request)
    session = _session(c, who.principal, session_id)
    q = request.query_params
    line_start = int_param(q.get("line_start"), "line_start", 0, 10_000_000)
    line_end = int_param(q.get("line_end"), "line_end", 0, 10_000_000)
    lines: list[Any] | None = None
    service = getattr(c, "transcripts", None)
    if service is not None and hasattr(service, "lines"):
        lines = list(service.lines(who.principal, session_id, line_start, line_end))
    params = {k: v for k, v in {"line_start": line_start, "line_end": line_end}.items() if v is not None}
    api_url = f"{base_path(request)}/v1/sessions/{session_id}/transcript" + (
        f"?{urlencode(params)}" if params else ""
    )
    return render(
        request,
        who,
        "transcript.html",
        nav="sessions",
        s=session,
        line_start=line_start,
        line_end=line_end,
        lines=lines,
        api_url=api_url,
    )

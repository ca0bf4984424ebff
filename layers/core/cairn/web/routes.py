"""The web UI's pages: overview, memories (filter, search, edit...), sessions, context preview, keys.

Handlers are as thin as the REST ones: they resolve the caller from the signed session cookie, call the
same services through the app's container with that Principal (team and scope checks live there), and
render a template. Every POST carries the session's CSRF token; a change refused by a service's scope
check answers 403 exactly as the API does. Errors render as HTML pages; an expired, forged or revoked
session redirects to the sign-in page.
"""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute

from cairn import __version__
from cairn.domain.errors import CairnError, Forbidden, InvalidInput, NotFound, Unauthenticated, Unavailable
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    Scope,
    Session,
)
from cairn.services.context import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from cairn.services.feedback import FeedbackService, Signal
from cairn.services.memories import MemoryPatch, NewMemory, require
from cairn.services.uploads import check_session_id
from cairn.web import security as sec

MEMORY_PAGE = 25
SESSION_PAGE = 25
AGENT_SCAN_PAGES = 20  # the agent filter is applied to listing pages; this bounds one page's scan
COUNTS_TTL_S = 30.0
MAX_FORM_BYTES = 64 * 1024
STAGES = ("parse", "chunk", "extract", "consolidate", "reflect")
NOTICES = {
    "saved": "Saved.",
    "pinned": "Pinned.",
    "unpinned": "Unpinned.",
    "forgotten": "The memory was forgotten.",
    "superseded": "Superseded: this is the new version; the old one stays in its history.",
    "feedback": "Thanks: the memory's confidence was updated.",
    "reprocess": "Queued: the session's pipeline runs again.",
    "revoked": "The key was revoked.",
}
_STATIC = {"cairn.css": "text/css; charset=utf-8", "cairn.js": "text/javascript; charset=utf-8"}
_static_cache: dict[str, bytes] = {}


def _dt(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _short(text: str | None, n: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


@cache
def _templates() -> Any:
    """The page templates, made on the first page: jinja2 costs ~0.1 s to import, which the API Lambda's
    hook and REST requests (most cold starts) never need."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["dt"] = _dt
    env.filters["short"] = _short
    env.filters["pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True, default=str)
    return env


class SignedOut(Exception):
    """No valid session: the page redirects to sign-in."""


class UiRoute(APIRoute):
    """Renders errors as pages (not the API's JSON) and adds the security headers to every answer."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        original = super().get_route_handler()

        async def handler(request: Request) -> Response:
            try:
                response = await original(request)
            except SignedOut:
                response = RedirectResponse(_base(request) + "/ui/login", status_code=303)
                sec.clear_cookie(response, request, sec.SESSION_COOKIE, _cookie_path(request))
            except CairnError as exc:
                response = _error_page(request, exc)
            for name, value in sec.SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        return handler


router = APIRouter(route_class=UiRoute, include_in_schema=False)


# --- plumbing -----------------------------------------------------------------------------------------
def _c(request: Request) -> Any:
    return request.app.state.container


def _base(request: Request) -> str:
    """The path prefix the browser sees: the API Gateway stage on an execute-api host, else root_path."""
    event = request.scope.get("aws.event") or {}
    stage = (event.get("requestContext") or {}).get("stage")
    if stage and request.headers.get("host", "").endswith(".amazonaws.com"):
        return f"/{stage}"
    return str(request.scope.get("root_path", "")).rstrip("/")


def _cookie_path(request: Request) -> str:
    return _base(request) + "/ui"


def _secret(request: Request) -> bytes:
    secret = _c(request).ui_secret
    if not secret:
        raise Unavailable("the web UI is not configured on this server (set CAIRN_UI_SECRET)")
    return secret


@dataclass(frozen=True, slots=True)
class Viewer:
    """The signed-in caller of one page: their Principal and this session's CSRF token."""

    principal: Principal
    csrf: str

    @property
    def can_write(self) -> bool:
        return self.principal.allows(KeyScope.WRITE)

    @property
    def is_admin(self) -> bool:
        return self.principal.allows(KeyScope.ADMIN)


def viewer(request: Request) -> Viewer:
    """Dependency: the caller, from the session cookie, with the key checked again (revoked: signed out)."""
    secret = _secret(request)
    session = sec.read_session(secret, request.cookies.get(sec.SESSION_COOKIE))
    if session is None:
        raise SignedOut
    try:
        caller = _c(request).keys.principal_for_key(session.team_id, session.key_id)
    except Unauthenticated as exc:
        raise SignedOut from exc
    return Viewer(caller, sec.csrf_token(secret, session))


async def form_fields(request: Request) -> dict[str, list[str]]:
    raw = await request.body()
    if len(raw) > MAX_FORM_BYTES:
        raise InvalidInput("the form is too large")
    try:
        return parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput("the form could not be read") from exc


@dataclass(frozen=True, slots=True)
class Form:
    fields: dict[str, list[str]]

    def get(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[0] if values else default

    def all(self, name: str) -> list[str]:
        return list(self.fields.get(name, []))


def posted(
    request: Request,
    who: Annotated[Viewer, Depends(viewer)],
    fields: Annotated[dict[str, list[str]], Depends(form_fields)],
) -> tuple[Viewer, Form]:
    """Dependency for every change: a signed-in caller and a form carrying this session's CSRF token."""
    form = Form(fields)
    if not sec.tokens_match(who.csrf, form.get("csrf")):
        raise Forbidden("the form's security token is missing or stale; reload the page and try again")
    return who, form


Who = Annotated[Viewer, Depends(viewer)]
Posted = Annotated[tuple[Viewer, Form], Depends(posted)]


def _render(request: Request, who: Viewer | None, template: str, status: int = 200, **ctx: Any) -> Response:
    notice = NOTICES.get(request.query_params.get("done", ""))
    ctx.setdefault("nav", "")
    html = (
        _templates()
        .get_template(template)
        .render(
            base=_base(request),
            who=who,
            me=who.principal if who else None,
            csrf=who.csrf if who else "",
            notice=notice,
            version=__version__,
            **ctx,
        )
    )
    return HTMLResponse(html, status_code=status)


def _redirect(request: Request, path: str, done: str | None = None) -> RedirectResponse:
    url = _base(request) + path + (("&" if "?" in path else "?") + urlencode({"done": done}) if done else "")
    return RedirectResponse(url, status_code=303)


def _error_page(request: Request, exc: CairnError) -> Response:
    from cairn.api.errors import status_for

    status = status_for(exc)
    try:
        who = viewer(request)
    except (SignedOut, CairnError):
        who = None
    return _render(request, who, "error.html", status=status, code=status, message=exc.message)


def _enum(cls: type, value: str | None, label: str) -> Any:
    if not value:
        return None
    try:
        return cls(value)
    except ValueError as exc:
        raise InvalidInput(f"unknown {label} {value!r}") from exc


def _int(value: str | None, label: str, lo: int, hi: int, default: int | None = None) -> int | None:
    if value in (None, ""):
        return default
    try:
        number = int(value)  # type: ignore[arg-type]
    except ValueError as exc:
        raise InvalidInput(f"{label} must be a whole number") from exc
    if not lo <= number <= hi:
        raise InvalidInput(f"{label} must be between {lo} and {hi}")
    return number


# --- static files and sign-in ------------------------------------------------------------------------
@router.get("/")
def root(request: Request) -> Response:
    return RedirectResponse(_base(request) + "/ui/", status_code=303)


@router.get("/ui/static/{name}")
def static(name: str) -> Response:
    if name not in _STATIC:
        raise NotFound(f"no static file {name}")
    if name not in _static_cache:
        _static_cache[name] = resources.files("cairn.web").joinpath("static", name).read_bytes()
    return Response(
        _static_cache[name],
        media_type=_STATIC[name],
        headers={"Cache-Control": "public, max-age=300"},
    )


@router.get("/ui/login")
def login_page(request: Request) -> Response:
    return _login_form(request)


def _login_form(request: Request, error: str | None = None, status: int = 200) -> Response:
    secret = _secret(request)
    nonce = secrets.token_urlsafe(24)
    response = _render(
        request,
        None,
        "login.html",
        status=status,
        login_csrf=sec.login_csrf_token(secret, nonce),
        error=error,
    )
    sec.set_cookie(response, request, sec.LOGIN_COOKIE, nonce, sec.LOGIN_TTL_S, _cookie_path(request))
    return response


@router.post("/ui/login")
def login(request: Request, fields: Annotated[dict[str, list[str]], Depends(form_fields)]) -> Response:
    secret = _secret(request)
    form = Form(fields)
    nonce = request.cookies.get(sec.LOGIN_COOKIE, "")
    if not nonce or not sec.tokens_match(sec.login_csrf_token(secret, nonce), form.get("csrf")):
        return _login_form(request, "The sign-in form expired; please try again.", 403)
    try:
        caller = _c(request).keys.authenticate(form.get("key"))
    except Unauthenticated as exc:
        return _login_form(request, exc.message, 401)
    response = _redirect(request, "/ui/")
    cookie = sec.issue_session(secret, caller.team_id, caller.key_id)
    sec.set_cookie(response, request, sec.SESSION_COOKIE, cookie, sec.SESSION_TTL_S, _cookie_path(request))
    sec.clear_cookie(response, request, sec.LOGIN_COOKIE, _cookie_path(request))
    return response


@router.post("/ui/logout")
def logout(request: Request, post: Posted) -> Response:
    response = _redirect(request, "/ui/login")
    sec.clear_cookie(response, request, sec.SESSION_COOKIE, _cookie_path(request))
    return response


# --- overview ----------------------------------------------------------------------------------------
def project_counts(container: Any, caller: Principal) -> list[dict[str, Any]]:
    """Current memories the caller can see, counted by project and kind (team-wide ones apart)."""
    counts: dict[str | None, Counter[str]] = defaultdict(Counter)
    for row in container.memories.counts(caller, MemoryFilter()):
        counts[row.project if row.scope is not Scope.TEAM else None][row.kind.value] += row.count
    rows = [
        {"project": p, "total": sum(c.values()), "kinds": dict(c)} for p, c in counts.items() if p is not None
    ]
    rows.sort(key=lambda r: (-r["total"], r["project"]))
    if None in counts:
        rows.append({"project": None, "total": sum(counts[None].values()), "kinds": dict(counts[None])})
    return rows


_counts_cache: dict[tuple[str, str], tuple[float, list[dict[str, Any]]]] = {}


def cached_project_counts(container: Any, caller: Principal) -> list[dict[str, Any]]:
    """`project_counts`, kept COUNTS_TTL_S per team member: a scan of the whole team's memories
    (~0.4 s at 10k locally) should not run on every visit. The UI's own changes drop it at once."""
    key = (caller.team_id, caller.member)
    hit = _counts_cache.get(key)
    now = time.monotonic()
    if hit and now - hit[0] < COUNTS_TTL_S:
        return hit[1]
    rows = project_counts(container, caller)
    if len(_counts_cache) > 1000:
        _counts_cache.clear()
    _counts_cache[key] = (now, rows)
    return rows


def _changed(caller: Principal) -> None:
    for key in [k for k in _counts_cache if k[0] == caller.team_id]:
        _counts_cache.pop(key, None)


def _sessions(container: Any, caller: Principal, project: str | None, limit: int, cursor: str | None):
    require(caller, KeyScope.READ)
    return container.sessions.list(caller.team_id, project, limit, cursor)


@router.get("/ui/")
def overview(request: Request, who: Who) -> Response:
    c = _c(request)
    projects = cached_project_counts(c, who.principal)
    recent = _sessions(c, who.principal, None, 10, None).items
    return _render(
        request,
        who,
        "overview.html",
        nav="overview",
        projects=projects,
        kinds=[k.value for k in MemoryKind],
        sessions=[_session_view(s) for s in recent],
    )


# --- memories ----------------------------------------------------------------------------------------
@router.get("/ui/memories")
def memories(request: Request, who: Who) -> Response:
    q = request.query_params
    c = _c(request)
    kind = _enum(MemoryKind, q.get("kind"), "kind")
    scope = _enum(Scope, q.get("scope"), "scope")
    tag = (q.get("tag") or "").strip().lower()[:100]
    agent = (q.get("agent") or "").strip()[:64]
    flt = MemoryFilter(
        project=(q.get("project") or "").strip()[:300] or None,
        kinds=frozenset({kind}) if kind else None,
        scopes=frozenset({scope}) if scope else None,
        tags=frozenset({tag}) if tag else None,
        session_id=(q.get("session") or "").strip()[:200] or None,
        include_superseded=q.get("superseded") == "1",
    )
    query = (q.get("q") or "").strip()[:1000]
    hits: list[tuple[Memory, float | None]] = []
    next_cursor = None
    degraded = None
    if query:
        require(who.principal, KeyScope.READ)
        result = c.recall.recall(who.principal.team_id, query, replace(flt, member=who.principal.member), 50)
        hits = [(h.memory, h.score) for h in result.hits if _agent_matches(h.memory, agent)]
        degraded = result.degraded
    else:
        cursor = (q.get("cursor") or "")[:500] or None
        for _ in range(AGENT_SCAN_PAGES if agent else 1):
            page = c.memories.list(who.principal, flt, MEMORY_PAGE, cursor)
            hits += [(m, None) for m in page.items if _agent_matches(m, agent)]
            cursor = next_cursor = page.next_cursor
            if not cursor or len(hits) >= MEMORY_PAGE:
                break
    filters = {
        k: v
        for k, v in {
            "project": flt.project or "",
            "kind": kind.value if kind else "",
            "scope": scope.value if scope else "",
            "tag": tag,
            "session": flt.session_id or "",
            "agent": agent,
            "q": query,
            "superseded": "1" if flt.include_superseded else "",
        }.items()
        if v
    }
    page_url = f"{_base(request)}/ui/memories?"
    next_url = f"{page_url}{urlencode({**filters, 'cursor': next_cursor})}" if next_cursor else None
    return _render(
        request,
        who,
        "memories.html",
        nav="memories",
        hits=hits,
        filters=filters,
        searched=bool(query),
        degraded=degraded,
        next_url=next_url,
        first_url=f"{page_url}{urlencode(filters)}" if q.get("cursor") else None,
        kinds=[k.value for k in MemoryKind],
        scopes=[s.value for s in Scope],
    )


def _agent_matches(memory: Memory, agent: str) -> bool:
    return not agent or (memory.provenance.agent or "") == agent


def _history(c: Any, caller: Principal, memory: Memory) -> list[Memory]:
    """The supersession chain through this memory, oldest first (what the caller may see of it)."""
    older: list[Memory] = []
    current = memory
    for _ in range(20):
        rels = [
            r
            for r in c.memories.relations_of(caller, current.id, "out")
            if r.predicate == "supersedes" and r.source_id == current.id
        ]
        if not rels:
            break
        try:
            current = c.memories.get(caller, rels[0].target_id)
        except NotFound:
            break
        older.insert(0, current)
    newer: list[Memory] = []
    current = memory
    for _ in range(20):
        if not current.superseded_by:
            break
        try:
            current = c.memories.get(caller, current.superseded_by)
        except NotFound:
            break
        newer.append(current)
    return [*older, memory, *newer]


def _related(c: Any, caller: Principal, memory: Memory) -> list[dict[str, Any]]:
    out = []
    for r in c.memories.relations_of(caller, memory.id, "both"):
        other_id = r.target_id if r.source_id == memory.id else r.source_id
        try:
            other: Memory | None = c.memories.get(caller, other_id)
        except (NotFound, InvalidInput):
            other = None
        out.append(
            {
                "relation": r,
                "outgoing": r.source_id == memory.id,
                "other_id": other_id,
                "other": other,
            }
        )
    return out


@router.get("/ui/memories/{memory_id}")
def memory_page(memory_id: str, request: Request, who: Who) -> Response:
    c = _c(request)
    memory = c.memories.get(who.principal, memory_id)
    feedback = dict(memory.details.get("feedback") or {})
    details = {k: v for k, v in memory.details.items() if k != "feedback"}
    return _render(
        request,
        who,
        "memory.html",
        nav="memories",
        m=memory,
        history=_history(c, who.principal, memory),
        related=_related(c, who.principal, memory),
        feedback=feedback,
        details=details,
        transcript_url=_transcript_url(request, memory.provenance),
        signals=[s.value for s in Signal],
    )


def _transcript_url(request: Request, p: Provenance) -> str | None:
    if not p.session_id:
        return None
    params = {k: v for k, v in {"line_start": p.line_start, "line_end": p.line_end}.items() if v is not None}
    query = f"?{urlencode(params)}" if params else ""
    return f"{_base(request)}/ui/sessions/{p.session_id}/transcript{query}"


def _tags(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.replace("\n", ",").split(",") if t.strip())


@router.post("/ui/memories/{memory_id}/edit")
def edit_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    patch = MemoryPatch(
        content=form.get("content"),
        title=form.get("title").strip(),
        tags=_tags(form.get("tags")),
    )
    _c(request).memories.update(who.principal, memory_id, patch)
    _changed(who.principal)
    return _redirect(request, f"/ui/memories/{memory_id}", "saved")


@router.post("/ui/memories/{memory_id}/pin")
def pin_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    pinned = form.get("pinned") == "1"
    _c(request).memories.update(who.principal, memory_id, MemoryPatch(pinned=pinned))
    return _redirect(request, f"/ui/memories/{memory_id}", "pinned" if pinned else "unpinned")


@router.post("/ui/memories/{memory_id}/forget")
def forget_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, _ = post
    _c(request).memories.forget(who.principal, memory_id)
    _changed(who.principal)
    return _redirect(request, "/ui/memories", "forgotten")


@router.post("/ui/memories/{memory_id}/supersede")
def supersede_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    c = _c(request)
    old = c.memories.get(who.principal, memory_id)
    new = NewMemory(
        kind=old.kind,
        content=form.get("content"),
        scope=old.scope,
        project=old.project,
        title=form.get("title").strip() or old.title,
        tags=_tags(form.get("tags")) if form.get("tags").strip() else old.tags,
        pinned=old.pinned,
        confidence=old.confidence,
    )
    _, replacement = c.memories.supersede(who.principal, memory_id, new)
    _changed(who.principal)
    return _redirect(request, f"/ui/memories/{replacement.id}", "superseded")


@router.post("/ui/memories/{memory_id}/feedback")
def feedback_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    signal = _enum(Signal, form.get("signal"), "signal")
    if signal is None:
        raise InvalidInput("choose useful, wrong or stale")
    note = form.get("note").strip()[:500] or None
    FeedbackService(_c(request).memories).give(who.principal, memory_id, signal, note)
    return _redirect(request, f"/ui/memories/{memory_id}", "feedback")


# --- sessions ----------------------------------------------------------------------------------------
def _session_view(s: Session) -> dict[str, Any]:
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
        elif s.status == "processing":
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
    page = _sessions(_c(request), who.principal, project, SESSION_PAGE, cursor)
    params = {"project": project} if project else {}
    next_url = (
        f"{_base(request)}/ui/sessions?{urlencode({**params, 'cursor': page.next_cursor})}"
        if page.next_cursor
        else None
    )
    return _render(
        request,
        who,
        "sessions.html",
        nav="sessions",
        sessions=[_session_view(s) for s in page.items],
        project=project or "",
        next_url=next_url,
    )


def _session(c: Any, caller: Principal, session_id: str) -> Session:
    require(caller, KeyScope.READ)
    check_session_id(session_id)
    session = c.sessions.get(caller.team_id, session_id)
    if session is None:
        raise NotFound(f"no session {session_id}")
    return session


@router.get("/ui/sessions/{session_id}")
def session_page(session_id: str, request: Request, who: Who) -> Response:
    c = _c(request)
    session = _session(c, who.principal, session_id)
    learned = c.memories.list(who.principal, MemoryFilter(session_id=session_id), 50).items
    return _render(
        request,
        who,
        "session.html",
        nav="sessions",
        v=_session_view(session),
        memories=learned,
        can_reprocess=c.runner is not None,
    )


@router.post("/ui/sessions/{session_id}/reprocess")
def reprocess_session(session_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    require(who.principal, KeyScope.WRITE)
    c = _c(request)
    _session(c, who.principal, session_id)
    if c.runner is None:
        raise Unavailable("no pipeline runner is configured on this server")
    c.runner.start(who.principal.team_id, session_id, force=form.get("force") == "1")
    return _redirect(request, f"/ui/sessions/{session_id}", "reprocess")


@router.get("/ui/sessions/{session_id}/transcript")
def transcript_page(session_id: str, request: Request, who: Who) -> Response:
    """The transcript lines a memory was learned from. Rendered through the container's transcript
    service when this server has one (`transcripts.lines`); otherwise the range and the API route."""
    c = _c(request)
    session = _session(c, who.principal, session_id)
    q = request.query_params
    line_start = _int(q.get("line_start"), "line_start", 0, 10_000_000)
    line_end = _int(q.get("line_end"), "line_end", 0, 10_000_000)
    lines: list[Any] | None = None
    service = getattr(c, "transcripts", None)
    if service is not None and hasattr(service, "lines"):
        lines = list(service.lines(who.principal, session_id, line_start, line_end))
    params = {k: v for k, v in {"line_start": line_start, "line_end": line_end}.items() if v is not None}
    api_url = f"{_base(request)}/v1/sessions/{session_id}/transcript" + (
        f"?{urlencode(params)}" if params else ""
    )
    return _render(
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


# --- context preview ---------------------------------------------------------------------------------
@router.get("/ui/context")
def context_preview(request: Request, who: Who) -> Response:
    q = request.query_params
    c = _c(request)
    project = (q.get("project") or "").strip()
    agent = (q.get("agent") or "claude-code").strip()
    budget = _int(q.get("budget"), "budget", MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET)
    ctx = None
    if project:
        ctx = c.context.assemble(who.principal, project, agent, budget, consume=False)
    recent = _sessions(c, who.principal, None, 100, None).items  # suggestions; any project can be typed
    projects = sorted({s.project for s in recent if s.project})
    return _render(
        request,
        who,
        "context.html",
        nav="context",
        project=project,
        agent=agent,
        budget=budget,
        ctx=ctx,
        projects=projects,
        min_budget=MIN_BUDGET,
        max_budget=MAX_BUDGET,
    )


# --- keys (admin) ------------------------------------------------------------------------------------
def _keys_page(request: Request, who: Viewer, created: Any = None, secret: str | None = None) -> Response:
    keys = _c(request).keys.list_keys(who.principal)
    return _render(
        request,
        who,
        "keys.html",
        nav="keys",
        keys=keys,
        created=created,
        secret=secret,
        scopes=[s.value for s in KeyScope],
        now=datetime.now(UTC),
    )


@router.get("/ui/keys")
def keys(request: Request, who: Who) -> Response:
    return _keys_page(request, who)


@router.post("/ui/keys")
def create_key(request: Request, post: Posted) -> Response:
    who, form = post
    scopes = frozenset(_enum(KeyScope, s, "scope") for s in form.all("scope") if s)
    days = _int(form.get("expires_days"), "expiry (days)", 1, 3650)
    key, secret = _c(request).keys.create_key(
        who.principal,
        form.get("member"),
        form.get("name"),
        scopes,
        timedelta(days=days) if days else None,
    )
    return _keys_page(request, who, created=key, secret=secret)  # the secret is shown this once


@router.post("/ui/keys/{key_id}/revoke")
def revoke_key(key_id: str, request: Request, post: Posted) -> Response:
    who, _ = post
    _c(request).keys.revoke_key(who.principal, key_id)
    if key_id == who.principal.key_id:
        return _redirect(request, "/ui/login")
    return _redirect(request, "/ui/keys", "revoked")

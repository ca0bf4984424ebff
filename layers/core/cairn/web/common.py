"""What every page of the web UI shares: the caller from the session cookie, forms with their CSRF
token, rendering and redirects, errors as pages, and the route class that adds the security headers.

Handlers are as thin as the REST ones: they resolve the caller from the signed session cookie, call the
same services through the app's container with that Principal (team and scope checks live there), and
render a template. Every POST carries the session's CSRF token; a change refused by a service's scope
check answers 403 exactly as the API does. Errors render as HTML pages; an expired, forged or revoked
session redirects to the sign-in page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute

from cairn import __version__
from cairn.domain.errors import CairnError, Forbidden, InvalidInput, Unauthenticated, Unavailable
from cairn.domain.models import (
    KeyScope,
    Principal,
)
from cairn.web import security as sec

MAX_FORM_BYTES = 64 * 1024
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


def dt(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def short(text: str | None, n: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


@cache
def templates() -> Any:
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
    env.filters["dt"] = dt
    env.filters["short"] = short
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
                response = RedirectResponse(base_path(request) + "/ui/login", status_code=303)
                sec.clear_cookie(response, request, sec.SESSION_COOKIE, cookie_path(request))
            except CairnError as exc:
                response = error_page(request, exc)
            for name, value in sec.SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        return handler


# --- plumbing -----------------------------------------------------------------------------------------
def services(request: Request) -> Any:
    return request.app.state.container


def base_path(request: Request) -> str:
    """The path prefix the browser sees: the API Gateway stage on an execute-api host, else root_path."""
    event = request.scope.get("aws.event") or {}
    stage = (event.get("requestContext") or {}).get("stage")
    if stage and request.headers.get("host", "").endswith(".amazonaws.com"):
        return f"/{stage}"
    return str(request.scope.get("root_path", "")).rstrip("/")


def cookie_path(request: Request) -> str:
    return base_path(request) + "/ui"


def ui_secret(request: Request) -> bytes:
    secret = services(request).ui_secret
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

    @property
    def manages_keys(self) -> bool:
        """An admin key for every project (`KeyService`): a limited admin is not shown the keys page."""
        return self.is_admin and self.principal.projects is None


def viewer(request: Request) -> Viewer:
    """Dependency: the caller, from the session cookie, with the key checked again (revoked: signed out)."""
    secret = ui_secret(request)
    session = sec.read_session(secret, request.cookies.get(sec.SESSION_COOKIE))
    if session is None:
        raise SignedOut
    try:
        caller = services(request).keys.principal_for_key(session.team_id, session.key_id)
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


def render(request: Request, who: Viewer | None, template: str, status: int = 200, **ctx: Any) -> Response:
    notice = NOTICES.get(request.query_params.get("done", ""))
    ctx.setdefault("nav", "")
    html = (
        templates()
        .get_template(template)
        .render(
            base=base_path(request),
            who=who,
            me=who.principal if who else None,
            csrf=who.csrf if who else "",
            notice=notice,
            version=__version__,
            **ctx,
        )
    )
    return HTMLResponse(html, status_code=status)


def redirect(request: Request, path: str, done: str | None = None) -> RedirectResponse:
    url = (
        base_path(request)
        + path
        + (("&" if "?" in path else "?") + urlencode({"done": done}) if done else "")
    )
    return RedirectResponse(url, status_code=303)


def error_page(request: Request, exc: CairnError) -> Response:
    from cairn.api.errors import status_for

    status = status_for(exc)
    try:
        who = viewer(request)
    except (SignedOut, CairnError):
        who = None
    return render(request, who, "error.html", status=status, code=status, message=exc.message)


def enum_param(cls: type, value: str | None, label: str) -> Any:
    if not value:
        return None
    try:
        return cls(value)
    except ValueError as exc:
        raise InvalidInput(f"unknown {label} {value!r}") from exc


def int_param(value: str | None, label: str, lo: int, hi: int, default: int | None = None) -> int | None:
    if value in (None, ""):
        return default
    try:
        number = int(value)  # type: ignore[arg-type]
    except ValueError as exc:
        raise InvalidInput(f"{label} must be a whole number") from exc
    if not lo <= number <= hi:
        raise InvalidInput(f"{label} must be between {lo} and {hi}")
    return number

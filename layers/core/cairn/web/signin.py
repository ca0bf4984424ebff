"""The web UI's way in: the root redirect, the static files, sign-in with an API key and sign-out."""

from __future__ import annotations

import secrets
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from cairn.domain.errors import NotFound, Unauthenticated
from cairn.web import security as sec
from cairn.web.common import (
    Form,
    Posted,
    UiRoute,
    base_path,
    cookie_path,
    form_fields,
    redirect,
    render,
    services,
    ui_secret,
)

_STATIC = {"cairn.css": "text/css; charset=utf-8", "cairn.js": "text/javascript; charset=utf-8"}
_static_cache: dict[str, bytes] = {}

router = APIRouter(route_class=UiRoute, include_in_schema=False)


@router.get("/")
def root(request: Request) -> Response:
    return RedirectResponse(base_path(request) + "/ui/", status_code=303)


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
    secret = ui_secret(request)
    nonce = secrets.token_urlsafe(24)
    response = render(
        request,
        None,
        "login.html",
        status=status,
        login_csrf=sec.login_csrf_token(secret, nonce),
        error=error,
    )
    sec.set_cookie(response, request, sec.LOGIN_COOKIE, nonce, sec.LOGIN_TTL_S, cookie_path(request))
    return response


@router.post("/ui/login")
def login(request: Request, fields: Annotated[dict[str, list[str]], Depends(form_fields)]) -> Response:
    secret = ui_secret(request)
    form = Form(fields)
    nonce = request.cookies.get(sec.LOGIN_COOKIE, "")
    if not nonce or not sec.tokens_match(sec.login_csrf_token(secret, nonce), form.get("csrf")):
        return _login_form(request, "The sign-in form expired; please try again.", 403)
    try:
        caller = services(request).keys.authenticate(form.get("key"))
    except Unauthenticated as exc:
        return _login_form(request, exc.message, 401)
    response = redirect(request, "/ui/")
    cookie = sec.issue_session(secret, caller.team_id, caller.key_id)
    sec.set_cookie(response, request, sec.SESSION_COOKIE, cookie, sec.SESSION_TTL_S, cookie_path(request))
    sec.clear_cookie(response, request, sec.LOGIN_COOKIE, cookie_path(request))
    return response


@router.post("/ui/logout")
def logout(request: Request, post: Posted) -> Response:
    response = redirect(request, "/ui/login")
    sec.clear_cookie(response, request, sec.SESSION_COOKIE, cookie_path(request))
    return response

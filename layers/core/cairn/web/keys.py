"""The keys page (admin): list, create and revoke the team's API keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.domain.models import (
    KeyScope,
)
from cairn.web.common import Posted, UiRoute, Viewer, Who, enum_param, int_param, redirect, render, services

router = APIRouter(route_class=UiRoute, include_in_schema=False)


def _keys_page(request: Request, who: Viewer, created: Any = None, secret: str | None = None) -> Response:
    keys = services(request).keys.list_keys(who.principal)
    return render(
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
    scopes = frozenset(enum_param(KeyScope, s, "scope") for s in form.all("scope") if s)
    days = int_param(form.get("expires_days"), "expiry (days)", 1, 3650)
    # one project per line or comma-separated; empty: the key reaches every project of the team
    projects = frozenset(p.strip() for p in (form.get("projects") or "").replace(",", "\n").splitlines())
    key, secret = services(request).keys.create_key(
        who.principal,
        form.get("member"),
        form.get("name"),
        scopes,
        timedelta(days=days) if days else None,
        (projects - {""}) or None,
    )
    return _keys_page(request, who, created=key, secret=secret)  # the secret is shown this once


@router.post("/ui/keys/{key_id}/revoke")
def revoke_key(key_id: str, request: Request, post: Posted) -> Response:
    who, _ = post
    services(request).keys.revoke_key(who.principal, key_id)
    if key_id == who.principal.key_id:
        return redirect(request, "/ui/login")
    return redirect(request, "/ui/keys", "revoked")

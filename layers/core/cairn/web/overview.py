"""The overview page: the caller's memories counted by project and kind, and the latest sessions."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.domain.models import (
    MemoryFilter,
    MemoryKind,
    Principal,
    Scope,
)
from cairn.web.common import UiRoute, Who, render, services
from cairn.web.sessions import list_sessions, session_view

COUNTS_TTL_S = 30.0

router = APIRouter(route_class=UiRoute, include_in_schema=False)


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


_counts_cache: dict[tuple[str, str, str], tuple[float, list[dict[str, Any]]]] = {}


def cached_project_counts(container: Any, caller: Principal) -> list[dict[str, Any]]:
    """`project_counts`, kept COUNTS_TTL_S per team member: a scan of the whole team's memories
    (~0.4 s at 10k locally) should not run on every visit. The UI's own changes drop it at once."""
    key = (caller.team_id, caller.member, caller.key_id)  # a member's keys may reach different projects
    hit = _counts_cache.get(key)
    now = time.monotonic()
    if hit and now - hit[0] < COUNTS_TTL_S:
        return hit[1]
    rows = project_counts(container, caller)
    if len(_counts_cache) > 1000:
        _counts_cache.clear()
    _counts_cache[key] = (now, rows)
    return rows


def counts_changed(caller: Principal) -> None:
    for key in [k for k in _counts_cache if k[0] == caller.team_id]:
        _counts_cache.pop(key, None)


@router.get("/ui/")
def overview(request: Request, who: Who) -> Response:
    c = services(request)
    projects = cached_project_counts(c, who.principal)
    recent = list_sessions(c, who.principal, None, 10, None).items
    return render(
        request,
        who,
        "overview.html",
        nav="overview",
        projects=projects,
        kinds=[k.value for k in MemoryKind],
        sessions=[session_view(s) for s in recent],
    )

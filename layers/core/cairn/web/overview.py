"""The overview page: the caller's memories counted by project and kind, and the latest sessions."""

from __future__ import annotations

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


@router.get("/ui/")
def overview(request: Request, who: Who) -> Response:
    c = services(request)
    # the counters kept on write: a handful of items to read, so every visit is exact and no cache is kept
    projects = project_counts(c, who.principal)
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

"""The context preview: the block an agent would be given at session start, or for a prompt."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.services.context import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from cairn.web.common import UiRoute, Who, int_param, render, services
from cairn.web.sessions import list_sessions

router = APIRouter(route_class=UiRoute, include_in_schema=False)


@router.get("/ui/context")
def context_preview(request: Request, who: Who) -> Response:
    q = request.query_params
    c = services(request)
    project = (q.get("project") or "").strip()
    agent = (q.get("agent") or "claude-code").strip()
    budget = int_param(q.get("budget"), "budget", MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET)
    ctx = None
    if project:
        ctx = c.context.assemble(who.principal, project, agent, budget, consume=False)
    recent = list_sessions(c, who.principal, None, 100, None).items  # suggestions; any project can be typed
    projects = sorted({s.project for s in recent if s.project})
    return render(
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

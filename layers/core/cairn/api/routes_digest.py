"""`GET /v1/projects/{project}/digest`: "catch me up", what a project's last sessions (or those since a
date) asked, learned, changed and closed, and what is still open (`cairn.services.digest`).

The project key is a normalised git remote URL with slashes in it (`github.com/acme/shop`), so the
path parameter takes the rest of the path up to `/digest`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from cairn.api.auth import principal
from cairn.api.schemas import DigestOut
from cairn.domain.models import Principal
from cairn.services.digest import DEFAULT_BUDGET, MAX_BUDGET, MAX_SESSIONS, MIN_BUDGET, parse_since

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]


@router.get("/projects/{project:path}/digest", response_model=DigestOut)
def digest(
    project: str,
    caller: Caller,
    request: Request,
    sessions: Annotated[
        int | None, Query(ge=1, le=MAX_SESSIONS, description="The last N sessions (default 5).")
    ] = None,
    since: Annotated[
        str | None, Query(max_length=40, description="Sessions from this ISO date or date-time on.")
    ] = None,
    budget: Annotated[int, Query(ge=MIN_BUDGET, le=MAX_BUDGET)] = DEFAULT_BUDGET,
) -> DigestOut:
    found = request.app.state.container.digest.digest(
        caller, project, sessions=sessions, since=parse_since(since), budget_tokens=budget
    )
    return DigestOut.from_domain(found)

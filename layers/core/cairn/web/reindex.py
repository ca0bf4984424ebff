"""The reindex page (admin for every project): a model-change reindex's progress, the served and the
building model, locally the index's build, in AWS the Distributed Map's pages. Refreshes itself while a
rebuild is on; recall keeps answering from the served model meanwhile."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.domain.errors import Forbidden
from cairn.web.common import UiRoute, Who, render, services

router = APIRouter(route_class=UiRoute, include_in_schema=False)


@router.get("/ui/reindex")
def reindex_page(request: Request, who: Who) -> Response:
    if not who.manages_keys:  # the whole deployment's index, every team's: an admin of every project
        raise Forbidden("the reindex page needs an admin key for every project")
    progress = services(request).reindex_progress
    return render(request, who, "reindex.html", nav="reindex", p=progress() if progress is not None else None)

"""REST routes for session context: what the session-start and user-prompt hooks print for the agent.

`GET /v1/context` assembles the session-start block (and, for a key with the write scope, consumes the
pending handoff it delivers; a read-only key is shown it and leaves it waiting);
`GET /v1/context/prompt` returns a few memories relevant to one prompt. Both answer JSON with the
markdown, its token count (the same WordPiece count the budget is checked with) and the memory ids.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from cairn.api.auth import principal
from cairn.domain.models import Principal
from cairn.services.context import (
    DEFAULT_BUDGET,
    MAX_PROMPT_CHARS,
    PROMPT_BUDGET,
    PROMPT_LIMIT,
    AssembledContext,
)

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]
Project = Annotated[str, Query(min_length=1, max_length=300)]
Agent = Annotated[str, Query(min_length=1, max_length=64)]
Prompt = Annotated[str | None, Query(max_length=MAX_PROMPT_CHARS)]


def _out(ctx: AssembledContext) -> dict:
    return {
        "markdown": ctx.markdown,
        "tokens": ctx.tokens,
        "memory_ids": list(ctx.memory_ids),
        "handoff_id": ctx.handoff_id,
    }


@router.get("/context")
def session_context(
    caller: Caller,
    request: Request,
    project: Project,
    agent: Agent = "claude-code",
    budget: int = DEFAULT_BUDGET,  # the service refuses values outside its range with a clear 400
    prompt: Prompt = None,
) -> dict:
    ctx = request.app.state.container.context.assemble(caller, project, agent, budget, prompt)
    return _out(ctx)


@router.get("/context/prompt")
def prompt_context(
    caller: Caller,
    request: Request,
    project: Project,
    prompt: Annotated[str, Query(min_length=1, max_length=MAX_PROMPT_CHARS)],
    budget: int = PROMPT_BUDGET,
    limit: Annotated[int, Query(ge=1, le=10)] = PROMPT_LIMIT,
) -> dict:
    ctx = request.app.state.container.context.relevant(caller, project, prompt, budget, limit)
    return _out(ctx)

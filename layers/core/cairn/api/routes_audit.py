"""REST routes of the audit trail and of redaction: the team's trail (admin), one memory's (read), and
the admin's redaction of a string from the team's whole history."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from cairn.api.auth import principal
from cairn.domain.audit import AuditAction, AuditEntry
from cairn.domain.errors import Unavailable
from cairn.domain.models import Principal
from cairn.services.history import MAX_CHARS, MIN_CHARS

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]


class AuditEntryOut(BaseModel):
    id: str
    action: AuditAction
    target: str = Field(description="The memory, key, relation source, session, project or team acted on")
    at: str = Field(description="ISO-8601, UTC")
    member: str
    key_id: str = Field(description="The key used; `pipeline` for what the pipeline learned")
    agent: str | None = None
    request_id: str | None = Field(
        default=None, description="The API request (or pipeline run) it was part of"
    )
    project: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, e: AuditEntry) -> AuditEntryOut:
        return cls(
            id=e.id,
            action=e.action,
            target=e.target,
            at=e.at.isoformat(),
            member=e.member,
            key_id=e.key_id,
            agent=e.agent,
            request_id=e.request_id,
            project=e.project,
            details=dict(e.details),
        )


class AuditPageOut(BaseModel):
    items: list[AuditEntryOut]
    next_cursor: str | None = None


class RedactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    string: str = Field(min_length=MIN_CHARS, max_length=MAX_CHARS, description="Exact text to remove")
    project: str | None = Field(default=None, min_length=1, max_length=300, description="Only this project")


class RedactOut(BaseModel):
    memories: int
    sessions: int
    blobs: int
    old_versions: int


@router.get("/audit", response_model=AuditPageOut)
def team_audit(
    caller: Caller,
    request: Request,
    target: Annotated[str | None, Query(max_length=300, description="Only entries about this")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> AuditPageOut:
    page = request.app.state.container.audit.team(caller, limit, cursor, target)
    return AuditPageOut(items=[AuditEntryOut.of(e) for e in page.items], next_cursor=page.next_cursor)


@router.get("/memories/{memory_id}/audit", response_model=AuditPageOut)
def memory_audit(
    memory_id: str, caller: Caller, request: Request, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> AuditPageOut:
    entries = request.app.state.container.memories.history(caller, memory_id, limit)
    return AuditPageOut(items=[AuditEntryOut.of(e) for e in entries])


@router.post("/admin/redact", response_model=RedactOut)
async def redact(body: RedactIn, caller: Caller, request: Request) -> RedactOut:
    history = request.app.state.container.history
    if history is None:
        raise Unavailable("redaction is not configured on this server")
    report = await run_in_threadpool(history.redact, caller, body.string, body.project)
    return RedactOut(
        memories=report.memories,
        sessions=report.sessions,
        blobs=report.blobs,
        old_versions=report.old_versions,
    )

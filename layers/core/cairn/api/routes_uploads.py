"""Transcript uploads: `POST /v1/uploads` grants a presigned upload, `PUT /v1/uploads/{token}` receives it.

In AWS the client uploads straight to S3 with the presigned POST and the S3 event starts the Step
Functions pipeline; locally the signed token stands in for the S3 signature, this route stores the
object first and only then queues the session for the inline pipeline runner, so nothing is lost.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from cairn.api.auth import principal
from cairn.api.routes_sessions import router as sessions_router
from cairn.domain.errors import InvalidInput, NotFound, PayloadTooLarge, Unavailable
from cairn.domain.models import Principal, utcnow
from cairn.services.uploads import UploadRequest

uploads_router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]
GZIP_MAGIC = b"\x1f\x8b"


class UploadIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    agent: str = Field(min_length=1, max_length=32)
    session_id: str = Field(min_length=1, max_length=128)
    project: str = Field(min_length=1, max_length=300)
    part: int = Field(ge=1, le=10_000)
    bytes: int = Field(ge=1)
    content_type: str = Field(default="application/gzip", max_length=100)
    # when the session ran, for one uploaded after it ended (`cairn backfill`, `cairn ingest`)
    started_at: datetime | None = None


def _uploads(request: Request):
    uploads = request.app.state.container.uploads
    if uploads is None:
        raise Unavailable("uploads are not configured on this server")
    return uploads


@uploads_router.post("/uploads", status_code=201)
def request_upload(body: UploadIn, caller: Caller, request: Request) -> dict:
    target = _uploads(request).request_upload(
        caller,
        UploadRequest(
            agent=body.agent,
            session_id=body.session_id,
            project=body.project,
            part=body.part,
            size=body.bytes,
            content_type=body.content_type,
            started_at=body.started_at,
        ),
    )
    return {
        "url": target.url,
        "method": target.method,
        "fields": target.fields,
        "headers": target.headers,
        "key": target.key,
        "max_bytes": target.max_bytes,
        "expires_at": target.expires_at.isoformat(),
    }


@uploads_router.put("/uploads/{token}")
async def receive_upload(token: str, request: Request) -> dict:
    container = request.app.state.container
    verify = getattr(container.blobs, "verify_upload", None)
    if verify is None:  # S3 receives uploads itself; this route exists only for the local blob store
        raise NotFound("this server does not receive uploads directly")
    grant = verify(token, utcnow())
    content_type = (request.headers.get("content-type") or "").split(";")[0].strip()
    if content_type != grant.content_type:
        raise InvalidInput(f"Content-Type must be {grant.content_type}", got=content_type)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > grant.max_bytes:
        raise PayloadTooLarge(f"upload is larger than the {grant.max_bytes} bytes granted")
    data = await request.body()
    if len(data) > grant.max_bytes:
        raise PayloadTooLarge(f"upload is larger than the {grant.max_bytes} bytes granted")
    if not data:
        raise InvalidInput("upload is empty")
    if grant.content_type == "application/gzip" and not data.startswith(GZIP_MAGIC):
        raise InvalidInput("upload is not gzip data")
    await run_in_threadpool(container.blobs.put, grant.key, data, grant.content_type)
    session = await run_in_threadpool(_uploads(request).part_stored, grant.key)
    if session is not None and container.runner is not None:
        container.runner.start(session.team_id, session.id)
    return {"key": grant.key, "session_id": session.id if session else None, "stored": len(data)}


# the one router app.py includes: uploads plus the session routes (status, reprocess)
router = APIRouter()
router.include_router(uploads_router)
router.include_router(sessions_router)

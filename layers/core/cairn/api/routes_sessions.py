"""Session routes beyond the listing: one session's pipeline status, and reprocessing it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict

from cairn.api.auth import principal
from cairn.domain import codec
from cairn.domain.models import Principal
from cairn.services.sessions import reprocess as reprocess_session
from cairn.services.sessions import visible_session
from cairn.services.uploads import check_session_id

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]


class ReprocessIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    force: bool = False  # redo every stage instead of resuming from the last stage output


@router.get("/sessions/{session_id}")
def get_session(session_id: str, caller: Caller, request: Request) -> dict:
    check_session_id(session_id)
    return codec.encode_session(visible_session(caller, request.app.state.container.sessions, session_id))


@router.post("/sessions/{session_id}/reprocess", status_code=202)
def reprocess(session_id: str, caller: Caller, request: Request, body: ReprocessIn | None = None) -> dict:
    check_session_id(session_id)
    session = reprocess_session(caller, request.app.state.container, session_id, bool(body and body.force))
    return {"session": codec.encode_session(session), "queued": True}


@router.get("/sessions/{session_id}/transcript")
def transcript_lines(
    session_id: str,
    caller: Caller,
    request: Request,
    line_start: Annotated[int, Query(ge=1, le=10_000_000)],
    line_end: Annotated[int | None, Query(ge=1, le=10_000_000)] = None,
    around: Annotated[int, Query(ge=0, le=100)] = 0,
) -> dict:
    """The session's transcript lines (redacted) an excerpt or a memory's provenance points at."""
    check_session_id(session_id)
    window = request.app.state.container.transcripts.window(caller, session_id, line_start, line_end, around)
    return transcript_view(window)


def transcript_view(window) -> dict:
    return {
        "session_id": window.session_id,
        "agent": window.agent,
        "project": window.project,
        "line_start": window.line_start,
        "line_end": window.line_end,
        "total_lines": window.total_lines,
        "lines": [{"number": ln.number, "text": ln.text, "cut": ln.cut} for ln in window.lines],
    }

"""Session status (`domain.vocabulary.SessionStatus`) through the pipeline, with per-stage stats."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cairn.domain.errors import CairnError
from cairn.domain.models import Session
from cairn.domain.vocabulary import SessionStatus
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import SessionRef


def mark(deps: PipelineDeps, ref: SessionRef, status: SessionStatus, **stats: Any) -> Session | None:
    """Set the status (and merge stats) atomically: a part recorded meanwhile keeps its place."""

    def set_status(session: Session | None) -> Session | None:
        if session is None:
            return None
        merged = {} if status == SessionStatus.PROCESSING else dict(session.stats)
        merged.update(stats)
        return replace(session, status=status, stats=merged, updated_at=deps.clock())

    return deps.sessions.update(ref.team_id, ref.session_id, set_status)


def finish(
    deps: PipelineDeps, ref: SessionRef, learned_from: tuple[str, ...], **stats: Any
) -> Session | None:
    """Mark a run done: `learned` if it saw every part, else `received` again (a part came in meanwhile)."""

    def settle(session: Session | None) -> Session | None:
        if session is None:
            return None
        status = SessionStatus.LEARNED if session.transcript_keys == learned_from else SessionStatus.RECEIVED
        merged = {**session.stats, **stats}
        return replace(session, status=status, stats=merged, updated_at=deps.clock())

    return deps.sessions.update(ref.team_id, ref.session_id, settle)


def failure(stage: str, exc: BaseException) -> dict[str, Any]:
    """A clear reason for a failed run; unexpected errors say only their type (details go to the log)."""
    if isinstance(exc, CairnError):
        return {
            "stage": stage,
            "code": exc.code,
            "message": exc.message,
            "details": {k: str(v) for k, v in exc.details.items()},
        }
    return {"stage": stage, "code": "internal", "message": f"{type(exc).__name__} in the {stage} stage"}

"""Session status through the pipeline: received → processing → learned | failed, with per-stage stats."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cairn.domain.errors import CairnError
from cairn.domain.models import Session
from cairn.pipeline.models import SessionRef
from cairn.pipeline.stages import PipelineDeps


def mark(deps: PipelineDeps, ref: SessionRef, status: str, **stats: Any) -> Session | None:
    session = deps.sessions.get(ref.team_id, ref.session_id)
    if session is None:
        return None
    merged = {} if status == "processing" else dict(session.stats)
    merged.update(stats)
    updated = replace(session, status=status, stats=merged, updated_at=deps.clock())
    deps.sessions.put(updated)
    return updated


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

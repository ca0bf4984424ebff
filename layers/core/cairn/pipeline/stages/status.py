"""Session status (`domain.vocabulary.SessionStatus`) through the pipeline, with per-stage stats.

On AWS every stored part starts its own learning run (S3 → EventBridge → Step Functions), so runs of one
session can overlap. One run at a time holds the session: `take_run` records the holder under
`stats["run"]` in the same atomic session update that checks it (a conditional write on DynamoDB), with
the digest of the parts recorded when it took hold. A run that finds another live holder asks it to
learn again (`again`, in that same update) and leaves: its part is already recorded, and the holder,
ending, learns again (`settle_run`) when asked or when the parts changed, as local mode queues a session
again when a part arrives during its run. The hold expires after `RUN_HOLD`, longer than an execution
may live, so a stopped or timed-out run never blocks its session for good.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal

from cairn.domain.errors import CairnError
from cairn.domain.models import Session
from cairn.domain.vocabulary import SessionStatus
from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import SessionRef

#: Longer than a learning execution can run (the state machine's 2 h timeout, infra/units/pipeline.py,
#: checked by tests/infra/test_pipeline.py): a live run never loses its hold to the clock.
RUN_HOLD = timedelta(hours=2, minutes=5)


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


def _holder(session: Session) -> dict[str, Any]:
    held = session.stats.get("run")
    return dict(held) if isinstance(held, dict) else {}


def _live(holder: dict[str, Any], now: datetime) -> bool:
    try:
        return datetime.fromisoformat(str(holder.get("until"))) > now
    except ValueError:
        return False


def take_run(deps: PipelineDeps, ref: SessionRef, run: str) -> Literal["taken", "held", "missing"]:
    """Hold the session for `run` (an execution name) and mark it processing; "held" when another live
    run holds it (that run learns the parts recorded meanwhile), "missing" when there is no session."""
    now = deps.clock()
    held = False

    def take(session: Session | None) -> Session | None:
        nonlocal held
        if session is None:
            return None
        holder = _holder(session)
        held = holder.get("id") not in (None, run) and _live(holder, now)
        if held:  # the holder learns again when it ends (a forced reprocess records no new part)
            return replace(session, stats={**session.stats, "run": {**holder, "again": True}})
        hold = {"id": run, "until": (now + RUN_HOLD).isoformat(), "parts": k.digest(session.transcript_keys)}
        return replace(session, status=SessionStatus.PROCESSING, stats={"run": hold}, updated_at=now)

    taken = deps.sessions.update(ref.team_id, ref.session_id, take)
    if taken is None:
        return "missing"
    return "held" if held else "taken"


def settle_run(deps: PipelineDeps, ref: SessionRef, run: str, status: SessionStatus, **stats: Any) -> bool:
    """End `run` with `status` (learned or failed) and let the session go; True instead when the run
    learned and a part was recorded since it took hold: it keeps the session and must learn again."""
    again = False

    def settle(session: Session | None) -> Session | None:
        nonlocal again
        if session is None:
            return None
        holder = _holder(session)
        merged = {**session.stats, **stats}
        if holder.get("id") not in (None, run):  # not ours (its hold had expired): leave it to its holder
            again = False
            return replace(session, stats={**merged, "run": holder}, updated_at=deps.clock())
        asked = holder.get("again") or holder.get("parts") != k.digest(session.transcript_keys)
        again = status == SessionStatus.LEARNED and holder.get("id") == run and bool(asked)
        if again:
            return replace(session, status=SessionStatus.PROCESSING, stats=merged, updated_at=deps.clock())
        merged.pop("run", None)
        return replace(session, status=status, stats=merged, updated_at=deps.clock())

    deps.sessions.update(ref.team_id, ref.session_id, settle)
    return again

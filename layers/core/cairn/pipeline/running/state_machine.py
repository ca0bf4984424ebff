"""The Step Functions state contract, mapped onto the stage functions (the Lambda handlers call these).

State (see infra/units/pipeline.py): `{"source": {"bucket", "key", "run", ...}}` from the S3 event and
the execution's name (`run`), then each stage's small result under its own name. One run at a time
learns a session (`cairn.pipeline.stages.status.take_run`): parse answers `{"learned_by": <run>}` when
another run holds it, and the execution ends there; reflect answers `again: true` when parts were
recorded during the run, and the execution learns again from parse. After reflect, `dream` runs the
project's dream pass (a failure there is caught and the session stays learned); the scheduled pass is the
same stage started with no source, the one task of its own state machine. `chunk.chunks` holds chunk ids
(not keys: ids are short, so a few thousand fit in the 256 KB payload); the Map runs `extract` once
per id; results are counts.
"""

from __future__ import annotations

from typing import Any

from cairn.domain.audit import in_request
from cairn.domain.errors import InvalidInput
from cairn.domain.ports import TeamRepository
from cairn.domain.vocabulary import SessionStatus
from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import ChunkResult, ConsolidateResult, ExtractInput, ParseResult, SessionRef
from cairn.pipeline.stages.consolidate import consolidate
from cairn.pipeline.stages.dream import dream_all, dream_session
from cairn.pipeline.stages.ingest import chunk, extract, parse
from cairn.pipeline.stages.reflect import reflect
from cairn.pipeline.stages.status import settle_run, take_run
from cairn.services.uploads import UploadService, parse_transcript_key


def _ref(state: dict[str, Any]) -> SessionRef:
    key = str((state.get("source") or {}).get("key") or "")
    part = parse_transcript_key(key)
    if part is None:
        raise InvalidInput("the uploaded object is not a transcript part", key=key)
    return SessionRef(team_id=part.team_id, session_id=part.session_id)


def _run(state: dict[str, Any]) -> str:
    """The execution's name (the Source state adds it); the S3 event's id for a state without one."""
    source = state.get("source") or {}
    return str(source.get("run") or source.get("event_id") or "")


def parse_stage(deps: PipelineDeps, uploads: UploadService, state: dict[str, Any]) -> dict[str, Any]:
    ref = _ref(state)
    uploads.part_stored(state["source"]["key"])  # S3 took the upload itself: record the part now
    taken = take_run(deps, ref, _run(state))
    if taken == "missing":
        raise InvalidInput("no session recorded for this upload", session_id=ref.session_id)
    if taken == "held":  # the run holding the session learns this part when it ends
        return {"learned_by": _holder_of(deps, ref)}
    return parse(deps, ref).model_dump(mode="json")


def _holder_of(deps: PipelineDeps, ref: SessionRef) -> str:
    held = deps.session(ref).stats.get("run")
    return str(held.get("id") or "") if isinstance(held, dict) else ""


def chunk_stage(deps: PipelineDeps, state: dict[str, Any]) -> dict[str, Any]:
    result = chunk(deps, ParseResult.model_validate(state["parse"]))
    out = result.model_dump(mode="json", exclude={"chunk_keys"})
    out["chunks"] = [k.chunk_id_of(key) for key in result.chunk_keys]
    return out


def _chunk_result(deps: PipelineDeps, state: dict[str, Any]) -> ChunkResult:
    ref = _ref(state)
    session = deps.session(ref)
    keys = [k.stage_key(session, "chunk", cid) for cid in state["chunk"]["chunks"]]
    return ChunkResult(**ref.model_dump(), events_key=state["chunk"]["events_key"], chunk_keys=keys)


def extract_stage(deps: PipelineDeps, state: dict[str, Any]) -> dict[str, Any]:
    ref = _ref(state)
    key = k.stage_key(deps.session(ref), "chunk", str(state["chunk"]))
    result = extract(deps, ExtractInput(**ref.model_dump(), chunk_key=key))
    return {"candidates": result.candidates, "llm": result.queued_for_llm}


def consolidate_stage(deps: PipelineDeps, state: dict[str, Any]) -> dict[str, Any]:
    with in_request(f"run:{_run(state)}"):  # the audit trail's request id of the memories it writes
        return consolidate(deps, _chunk_result(deps, state)).model_dump(mode="json")


def reflect_stage(deps: PipelineDeps, state: dict[str, Any]) -> dict[str, Any]:
    done = ConsolidateResult.model_validate(state["consolidate"])
    with in_request(f"run:{_run(state)}"):
        result = reflect(deps, done)
    extracted = state.get("extract") or []
    stats = {
        "parse": {"parts": state["parse"]["parts"], "events": state["parse"]["events"]},
        "chunk": {"chunks": len(state["chunk"]["chunks"])},
        "extract": {
            "candidates": sum(e.get("candidates", 0) for e in extracted),
            "queued_for_llm": sum(bool(e.get("llm")) for e in extracted),
        },
        "consolidate": done.model_dump(
            include={"created", "merged", "superseded", "relations", "promoted", "excerpts", "excerpt_chars"}
        ),
        "reflect": result.model_dump(include={"reflection_id", "handoff_id", "procedures"}),
    }
    again = settle_run(deps, _ref(state), _run(state), SessionStatus.LEARNED, **stats, error=None)
    return {**result.model_dump(mode="json"), "again": again}


def dream_stage(deps: PipelineDeps, teams: TeamRepository, state: dict[str, Any]) -> dict[str, Any]:
    """After reflect (the state names the session): the dream pass over that session's project. Started
    by the schedule (no source): every project with memories written since its last pass."""
    if state.get("source"):
        return dream_session(deps, _ref(state))
    return dream_all(deps, teams)


def fail_stage(deps: PipelineDeps, state: dict[str, Any]) -> dict[str, Any]:
    """For the state machine's Catch path: the session is marked failed with the caught error."""
    error = state.get("error") or {}
    try:
        ref = _ref(state)
    except InvalidInput:
        return {"marked": False}
    cause = str(error.get("Cause") or "")[:500]
    settle_run(
        deps,
        ref,
        _run(state),
        SessionStatus.FAILED,
        error={
            "stage": "pipeline",
            "code": str(error.get("Error") or "error"),
            "message": cause or "the learning pipeline failed",
        },
    )
    return {"marked": True}

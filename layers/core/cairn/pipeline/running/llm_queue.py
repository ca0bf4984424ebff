"""Chunks the rules answered because the LLM was down, kept for a later LLM pass.

The extract stage records `stages/llm-queue/<chunk>.json` when it fell back. `requeue` forgets the
rules' extraction of those chunks and the session-level outputs built on it, so the next run of the
session (runner, or a new Step Functions execution) asks the model again; consolidation merges what
the model finds with what the rules already stored, so nothing is duplicated.
"""

from __future__ import annotations

import json

from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import SessionRef


def queued(deps: PipelineDeps, ref: SessionRef) -> list[str]:
    session = deps.session(ref)
    return deps.blobs.list(k.stages_prefix(session) + "llm-queue/")


def requeue(deps: PipelineDeps, ref: SessionRef) -> int:
    """Prepare the session's queued chunks for an LLM pass; returns how many chunks will be asked again."""
    session = deps.session(ref)
    entries = queued(deps, ref)
    for entry in entries:
        record = json.loads(deps.blobs.get(entry))
        deps.blobs.delete(k.candidates_key(session, record["chunk_key"]))
        deps.blobs.delete(entry)
    if entries:
        for stage in ("consolidate", "reflect"):
            for key in deps.blobs.list(f"{k.stages_prefix(session)}{stage}/"):
                deps.blobs.delete(key)
    return len(entries)

"""The reflect stage: the session's reflection memory and the handoff to its next session.

Nothing is consolidated here (the consolidate stage did all of it); this stage writes the one
reflection and the one handoff per session from the session's one reading.
"""

from __future__ import annotations

import json

from cairn.domain.models import MemoryKind
from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import ConsolidateResult, ReflectResult, taught_at
from cairn.pipeline.remembering.reflection import (
    reflection_text,
    save_handoff,
    save_once_per_session,
    summarise,
)

REFLECTED = ("requests", "tools", "files_edited", "errors_fixed", "unresolved_errors", "done", "edited_out")


def reflect(deps: PipelineDeps, done: ConsolidateResult) -> ReflectResult:
    session = deps.session(done)
    out_key = k.stage_key(session, "reflect", k.chunk_id_of(done.events_key))
    base = {**done.ref(), "output_key": out_key}
    if not deps.fresh(done, out_key):
        return ReflectResult(**base, **json.loads(deps.blobs.get(out_key)))
    _, reading = deps.reading(done.events_key)
    summary = summarise(reading)
    said_at = taught_at(reading.events, session)
    reflection = save_once_per_session(
        deps,
        session,
        MemoryKind.REFLECTION,
        reflection_text(session, summary),
        {key: summary[key] for key in REFLECTED},
        said_at,
    )
    handoff = save_handoff(deps, session, summary, reading.unresolved, said_at)
    result = {"reflection_id": reflection.id, "handoff_id": handoff.id, "procedures": done.procedures}
    deps.blobs.put(out_key, json.dumps(result).encode(), "application/json")
    return ReflectResult(**base, **result)

"""The consolidate stage: the session's candidates become memories, in the one place that does it.

The session is read once (`reading.session`); the chunks' candidates and what the whole session shows
(`learning.learners.WHOLE_SESSION`) are consolidated as one batch, the transcript excerpts are stored,
then what the session's commands came to over its whole length (`learning.learners.OVER_ITS_LENGTH`:
procedures, errors and their fixes, errors never fixed) is consolidated as a second batch. Two batches
keep the order memories are written in, and the links between them, as they have always been (the
second batch used to be consolidated by the reflect stage). Last, the folder the session ran in joins
the project's (`remembering.folders`): reads of files in the project's other checkouts are its own.
"""

from __future__ import annotations

import json

from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.learning.learners import OVER_ITS_LENGTH, WHOLE_SESSION, learn
from cairn.pipeline.models import Candidate, CandidatesDoc, ChunkResult, ConsolidateResult
from cairn.pipeline.remembering.consolidation import Consolidation, prepared
from cairn.pipeline.remembering.excerpts import store_excerpts
from cairn.pipeline.remembering.folders import settle_folders


def consolidate(deps: PipelineDeps, chunked: ChunkResult) -> ConsolidateResult:
    session = deps.session(chunked)
    out_key = k.stage_key(session, "consolidate", k.digest(chunked.chunk_keys))
    base = {**chunked.ref(), "events_key": chunked.events_key, "output_key": out_key}
    if not deps.fresh(chunked, out_key):
        done = json.loads(deps.blobs.get(out_key))
        settle_folders(deps, session, done.get("cwd"))  # a run starts the session's stats afresh
        return ConsolidateResult(**base, **done["counts"])
    events, reading = deps.reading(chunked.events_key)
    batch: list[Candidate] = []
    for chunk_key in chunked.chunk_keys:
        batch.extend(deps.read(k.candidates_key(session, chunk_key), CandidatesDoc).candidates)
    batch.extend(learn(reading, WHOLE_SESSION))
    outcome = Consolidation(deps, session, events).apply(prepared(batch))
    excerpts = store_excerpts(deps, session, events)
    over_its_length = learn(reading, OVER_ITS_LENGTH)
    Consolidation(deps, session, events).apply(over_its_length)
    retrusted = settle_folders(deps, session, events.cwd)
    counts = {  # of the first batch, as the session's stats have always counted them
        "created": len(outcome.created),
        "merged": len(outcome.merged),
        "superseded": len(outcome.superseded),
        "relations": outcome.relations,
        "promoted": len(outcome.promoted),
        "excerpts": excerpts.excerpts,
        "excerpt_chars": excerpts.chars,
        "procedures": sum(1 for c in over_its_length if c.details.get("mined")),
        "retrusted": retrusted,
    }
    deps.blobs.put(
        out_key,
        json.dumps(
            {
                "counts": counts,
                "created": outcome.created,
                "merged": outcome.merged,
                "superseded": outcome.superseded,
                "promoted": outcome.promoted,
                "refs": outcome.refs,
                "cwd": events.cwd,
            }
        ).encode(),
        "application/json",
    )
    return ConsolidateResult(**base, **counts)

"""The first stages: parse, chunk, extract.

Each stage reads its input from the blob store by key, writes its output as JSON under the session's
`stages/` prefix and returns a small pydantic result naming that output. When the output already
exists (a retry, a duplicate upload, a second run) the stage returns it without redoing the work.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cairn.domain.errors import InvalidInput
from cairn.pipeline import keys as k
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.learning.extractor import ExtractContext
from cairn.pipeline.models import (
    CandidatesDoc,
    ChunkDoc,
    ChunkResult,
    EventDoc,
    EventsDoc,
    ExtractInput,
    ExtractResult,
    ParseResult,
    SessionRef,
)
from cairn.pipeline.reading.parts import join_parts
from cairn.redaction import redact, redact_value, repeats_redactor
from cairn.transcripts import chunk_events, parse_transcript
from cairn.transcripts.model import TranscriptEvent

log = logging.getLogger(__name__)
MAX_CHUNKS = 3_000  # chunk ids (and per-chunk results) of one session stay under Step Functions' 256 KB


# --- parse ------------------------------------------------------------------------------------
def parse(deps: PipelineDeps, ref: SessionRef) -> ParseResult:
    session = deps.session(ref)
    parts = k.transcript_parts(deps.blobs.list(k.prefix_of(session) + "transcript-"), session)
    if not parts:
        raise InvalidInput("no transcript has been uploaded for this session", session_id=session.id)
    key = k.stage_key(session, "parse", f"parts-{len(parts)}-{k.digest(parts)}")
    if not deps.fresh(ref, key):
        doc = deps.read(key, EventsDoc)
        return ParseResult(**ref.model_dump(), events_key=key, parts=len(parts), events=len(doc.events))
    data, spans = join_parts(deps.blobs, parts)
    parsed = parse_transcript(data, agent=session.agent, filename=parts[-1])
    if not parsed.events and parsed.stats.lines and parsed.stats.malformed_lines >= parsed.stats.lines:
        raise InvalidInput("transcript has no readable line", lines=parsed.stats.lines)
    found: dict[str, str] = {}  # the secrets a rule found by their context, redacted again where repeated
    events = [_redacted(EventDoc.of(e), found) for e in parsed.events]
    subagent_calls = [_redacted(EventDoc.of(e), found) for e in parsed.subagent_calls]
    if again := repeats_redactor(found):
        events, subagent_calls = ([_again(e, again) for e in group] for group in (events, subagent_calls))
    doc = EventsDoc(
        agent=parsed.agent,
        session_id=parsed.session_id,
        cwd=parsed.cwd,
        git_remote=parsed.git_remote,
        git_branch=parsed.git_branch,
        branches=list(parsed.branches),
        parts=spans,
        stats=_stats(parsed.stats),
        events=events,
        project_files=[replace(f, text=redact(f.text).text) for f in parsed.project_files],
        subagent_calls=subagent_calls,
    )
    deps.write(key, doc)
    return ParseResult(**ref.model_dump(), events_key=key, parts=len(parts), events=len(doc.events))


def _redacted(event: EventDoc, found: dict[str, str]) -> EventDoc:
    """Defence in depth: clients redact before upload, but nothing downstream of parse may see a secret.
    `found` gathers the secrets a rule found by their context, for `_again`."""
    text = redact(event.text, found) if event.text else None
    tool_input = event.tool_input
    if tool_input:
        tool_input = redact_value(tool_input, Counter(), found=found)
    if (text is None or not text.counts) and tool_input == event.tool_input:
        return event
    return event.model_copy(update={"text": text.text if text else event.text, "tool_input": tool_input})


def _again(event: EventDoc, again: Callable[[Any], Any]) -> EventDoc:
    """`event` with the repeats of a secret another event gave redacted too (`redaction.repeats_redactor`)."""
    text = again(event.text) if event.text else event.text
    tool_input = again(event.tool_input) if event.tool_input else event.tool_input
    if text == event.text and tool_input == event.tool_input:
        return event
    return event.model_copy(update={"text": text, "tool_input": tool_input})


def _stats(stats) -> dict:
    return {
        "lines": stats.lines,
        "parsed": stats.parsed,
        "malformed_lines": stats.malformed_lines,
        "truncated_tail": stats.truncated_tail,
        "noise_dropped": dict(stats.noise_dropped),
    }


# --- chunk ------------------------------------------------------------------------------------
def chunk(deps: PipelineDeps, parsed: ParseResult) -> ChunkResult:
    session = deps.session(parsed)
    manifest = k.stage_key(session, "chunk", "manifest-" + k.chunk_id_of(parsed.events_key))
    if not deps.fresh(parsed, manifest):
        keys = json.loads(deps.blobs.get(manifest))
        return ChunkResult(**parsed.ref(), events_key=parsed.events_key, chunk_keys=keys)
    doc = deps.read(parsed.events_key, EventsDoc)
    events = [_event(e) for e in doc.events]
    chunks = chunk_events(events)
    if len(chunks) > MAX_CHUNKS:
        raise InvalidInput(f"transcript splits into more than {MAX_CHUNKS} chunks", chunks=len(chunks))
    by_seq = {e.seq: e for e in doc.events}
    chunk_keys = []
    for c in chunks:
        docs = [by_seq[e.seq] for e in c.events]
        # named by content, so an unchanged chunk of a longer transcript keeps its extraction
        cid = hashlib.sha256(json.dumps([d.model_dump(mode="json") for d in docs]).encode()).hexdigest()[:20]
        key = k.stage_key(session, "chunk", cid)
        if not deps.blobs.exists(key):
            deps.write(
                key,
                ChunkDoc(
                    chunk_id=cid, index=c.index, line_start=c.line_start, line_end=c.line_end, events=docs
                ),
            )
        chunk_keys.append(key)
    deps.blobs.put(manifest, json.dumps(chunk_keys).encode(), "application/json")
    return ChunkResult(**parsed.ref(), events_key=parsed.events_key, chunk_keys=chunk_keys)


def _event(e: EventDoc) -> TranscriptEvent:
    return TranscriptEvent(
        seq=e.seq,
        line_no=e.line_no,
        role=e.role,
        text=e.text,
        tool_name=e.tool_name,
        tool_input=e.tool_input,
        tool_call_id=e.tool_call_id,
        is_error=e.is_error,
        timestamp=e.timestamp,
        is_sidechain=e.is_sidechain,
        line_end=e.line_end,
        is_plan=e.is_plan,
        steers=e.steers,
    )


# --- extract (one chunk) ----------------------------------------------------------------------
def extract(deps: PipelineDeps, inp: ExtractInput) -> ExtractResult:
    session = deps.session(inp)
    if not inp.chunk_key.startswith(k.stages_prefix(session)):
        raise InvalidInput("chunk key is not under this session", key=inp.chunk_key)
    out_key = k.candidates_key(session, inp.chunk_key)
    if not deps.fresh(inp, out_key):
        doc = deps.read(out_key, CandidatesDoc)
        return ExtractResult(
            **inp.ref(),
            chunk_key=inp.chunk_key,
            candidates_key=out_key,
            candidates=len(doc.candidates),
            extractor=doc.extractor,
        )
    chunk_doc = deps.read(inp.chunk_key, ChunkDoc)
    ctx = ExtractContext(project=session.project, agent=session.agent, session_id=session.id)
    extraction = deps.extractor.extract(chunk_doc, ctx)
    if extraction.retry_with_llm:
        # the model was down: the rules answered now, and this chunk waits for a later LLM pass
        deps.blobs.put(
            k.stage_key(session, "llm-queue", chunk_doc.chunk_id),
            json.dumps(
                {
                    "chunk_key": inp.chunk_key,
                    "reason": extraction.note or "unavailable",
                    "at": deps.clock().isoformat(),
                }
            ).encode(),
            "application/json",
        )
    deps.write(
        out_key,
        CandidatesDoc(
            chunk_id=chunk_doc.chunk_id, extractor=extraction.extractor, candidates=extraction.candidates
        ),
    )
    return ExtractResult(
        **inp.ref(),
        chunk_key=inp.chunk_key,
        candidates_key=out_key,
        candidates=len(extraction.candidates),
        extractor=extraction.extractor,
        queued_for_llm=extraction.retry_with_llm,
    )

"""The first stages — parse, chunk, extract — and the dependencies every stage gets.

Each stage reads its input from the blob store by key, writes its output as JSON under the session's
`stages/` prefix and returns a small pydantic result naming that output. When the output already
exists (a retry, a duplicate upload, a second run) the stage returns it without redoing the work.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from pydantic import BaseModel

from cairn.domain.errors import InvalidInput, NotFound, PayloadTooLarge
from cairn.domain.models import KeyScope, Principal, Session, utcnow
from cairn.domain.ports import (
    BlobStore,
    Embedder,
    MemoryRepository,
    RelationRepository,
    SearchIndex,
    SessionRepository,
)
from cairn.pipeline import keys as k
from cairn.pipeline.learning.extractor import ExtractContext, Extractor
from cairn.pipeline.models import (
    CandidatesDoc,
    ChunkDoc,
    ChunkResult,
    EventDoc,
    EventsDoc,
    ExtractInput,
    ExtractResult,
    ParseResult,
    PartSpan,
    SessionRef,
)
from cairn.redaction import redact, redact_value
from cairn.services.memories import MemoryService
from cairn.transcripts import chunk_events, parse_transcript
from cairn.transcripts.lines import MAX_TRANSCRIPT_BYTES
from cairn.transcripts.model import TranscriptEvent

log = logging.getLogger(__name__)
MAX_CHUNKS = 3_000  # chunk ids (and per-chunk results) of one session stay under Step Functions' 256 KB


@dataclass
class PipelineDeps:
    blobs: BlobStore
    sessions: SessionRepository
    memories: MemoryService
    memory_repo: MemoryRepository
    relations: RelationRepository
    embedder: Embedder | None
    index: SearchIndex | None
    extractor: Extractor
    clock: Callable[[], datetime] = utcnow
    # the index embeds each write in this process through an embedder that keeps recent vectors
    # (local mode): a stage then embeds what it will write in one bulk call, on every core, and each
    # write finds its vector instead of embedding one text at a time
    warm_vectors: bool = False

    def session(self, ref: SessionRef) -> Session:
        session = self.sessions.get(ref.team_id, ref.session_id)
        if session is None:
            raise NotFound(f"no session {ref.session_id}")
        return session

    def read(self, key: str, model: type[BaseModel]):
        return model.model_validate_json(self.blobs.get(key))

    def write(self, key: str, doc: BaseModel) -> None:
        self.blobs.put(key, doc.model_dump_json(exclude_none=True).encode(), "application/json")

    def fresh(self, ref: SessionRef, key: str) -> bool:
        """True when the stage must run: no earlier output, or a forced reprocess."""
        return ref.force or not self.blobs.exists(key)


def pipeline_principal(session: Session) -> Principal:
    """The pipeline writes on behalf of the member whose session it learns from."""
    return Principal(
        team_id=session.team_id,
        member=session.member or "cairn-pipeline",
        key_id="pipeline",
        scopes=frozenset({KeyScope.WRITE}),
    )


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
    doc = EventsDoc(
        agent=parsed.agent,
        session_id=parsed.session_id,
        cwd=parsed.cwd,
        git_remote=parsed.git_remote,
        git_branch=parsed.git_branch,
        parts=spans,
        stats=_stats(parsed.stats),
        events=[_redacted(EventDoc.of(e)) for e in parsed.events],
        project_files=[replace(f, text=redact(f.text).text) for f in parsed.project_files],
    )
    deps.write(key, doc)
    return ParseResult(**ref.model_dump(), events_key=key, parts=len(parts), events=len(doc.events))


def _redacted(event: EventDoc) -> EventDoc:
    """Defence in depth: clients redact before upload, but nothing downstream of parse may see a secret."""
    text = redact(event.text) if event.text else None
    tool_input = redact_value(event.tool_input, Counter()) if event.tool_input else event.tool_input
    if (text is None or not text.counts) and tool_input == event.tool_input:
        return event
    return event.model_copy(update={"text": text.text if text else event.text, "tool_input": tool_input})


def join_parts(blobs: BlobStore, parts: list[str]) -> tuple[bytes, list[PartSpan]]:
    """Concatenate the decompressed parts; remember where each starts, for provenance line numbers.

    Parts are inflated a chunk at a time and never past what is left of MAX_TRANSCRIPT_BYTES, so a
    small upload that inflates to gigabytes (a gzip bomb) fails its session with a clear reason
    after holding at most the cap plus one chunk.
    """
    out = bytearray()
    spans = []
    line = 1
    for key in parts:
        raw = blobs.get(key)
        room = MAX_TRANSCRIPT_BYTES - len(out)
        if raw[:2] == GZIP_MAGIC:
            data = _gunzip_capped(raw, room, key)
        elif len(raw) > room:
            raise _too_large(key)
        else:
            data = raw
        if data and not data.endswith(b"\n"):
            data += b"\n"
        lines = data.count(b"\n")
        spans.append(PartSpan(key=key, first_line=line, lines=lines))
        line += lines
        out += data
    return bytes(out), spans


GZIP_MAGIC = b"\x1f\x8b"
INFLATE_CHUNK = 1024 * 1024  # output per decompress call: the most a part can overshoot the cap by


def _too_large(key: str) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"the session's transcript is larger than the {MAX_TRANSCRIPT_BYTES // (1024 * 1024)} MB "
        "the pipeline accepts once decompressed",
        key=key,
        limit_bytes=MAX_TRANSCRIPT_BYTES,
    )


def _gunzip_capped(raw: bytes, room: int, key: str, chunk: int = INFLATE_CHUNK) -> bytes:
    """Inflate every gzip member of `raw`, refusing as soon as the output passes `room` bytes."""
    out = bytearray()
    pending = raw
    try:
        while pending:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not inflater.eof:
                got = inflater.decompress(pending, chunk)  # max_length bounds this call's output
                out += got
                if len(out) > room:
                    raise _too_large(key)
                pending = inflater.unconsumed_tail
                if not pending and not got and not inflater.eof:
                    raise InvalidInput("a transcript part is not valid gzip: it is cut off", key=key)
            pending = inflater.unused_data  # concatenated members are legal gzip
    except zlib.error as exc:
        raise InvalidInput("a transcript part is not valid gzip", key=key) from exc
    return bytes(out)


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
        return ChunkResult(**_ref(parsed), events_key=parsed.events_key, chunk_keys=keys)
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
    return ChunkResult(**_ref(parsed), events_key=parsed.events_key, chunk_keys=chunk_keys)


def _ref(ref: SessionRef) -> dict:
    return {"team_id": ref.team_id, "session_id": ref.session_id, "force": ref.force}


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
    )


# --- extract (one chunk) ----------------------------------------------------------------------
def candidates_key(session: Session, chunk_key: str) -> str:
    return k.stage_key(session, "extract", k.chunk_id_of(chunk_key))


def extract(deps: PipelineDeps, inp: ExtractInput) -> ExtractResult:
    session = deps.session(inp)
    if not inp.chunk_key.startswith(k.stages_prefix(session)):
        raise InvalidInput("chunk key is not under this session", key=inp.chunk_key)
    out_key = candidates_key(session, inp.chunk_key)
    if not deps.fresh(inp, out_key):
        doc = deps.read(out_key, CandidatesDoc)
        return ExtractResult(
            **_ref(inp),
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
        **_ref(inp),
        chunk_key=inp.chunk_key,
        candidates_key=out_key,
        candidates=len(extraction.candidates),
        extractor=extraction.extractor,
        queued_for_llm=extraction.retry_with_llm,
    )

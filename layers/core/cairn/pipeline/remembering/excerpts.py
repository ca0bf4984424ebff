"""Store a session's transcript excerpts as searchable records, so nothing said in a session is lost.

Runs inside the consolidate stage (both modes, after the extracted memories): the session's events are
cut into steps (`reading.steps`), and each excerpt becomes a memory of kind `excerpt` in the session's
project, cited by its session and line span. Writing goes through MemoryService, so excerpts are
indexed exactly like memories (inline locally, by the stream indexer on AWS) and confined like them.

Idempotent per session: an excerpt whose text is already stored is kept; excerpts of an earlier run
that the longer transcript no longer produces (its last step grew) are removed, so a session always
holds one set of excerpts and a re-ingest adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cairn.domain.models import LEFT_OUT, MemoryFilter, MemoryKind, Provenance, Session, content_hash
from cairn.domain.vocabulary import Tag
from cairn.pipeline.deps import PipelineDeps, pipeline_principal
from cairn.pipeline.models import EventsDoc, taught_at
from cairn.pipeline.reading.left_out import LongOutput, left_out_prose, long_outputs
from cairn.pipeline.reading.steps import Excerpt, build_excerpts, written_by
from cairn.services.memories import NewMemory

EXCERPT_CONFIDENCE = 0.3  # what was said, not what was learned: below every extracted memory
LIST_PAGE = 500


@dataclass(frozen=True, slots=True)
class ExcerptCounts:
    excerpts: int
    created: int
    removed: int
    chars: int  # stored text of this session's excerpts: the per-session cost, bounded by steps.MAX_EXCERPTS


def store_excerpts(deps: PipelineDeps, session: Session, events: EventsDoc) -> ExcerptCounts:
    own = written_by(events.subagent_calls, events.cwd)
    excerpts = build_excerpts(events.events, cwd=events.cwd, own=own)
    caller = pipeline_principal(session)
    outputs = long_outputs(events.events)
    said_at = taught_at(events.events, session)
    wanted = [_new_memory(session, events, x, outputs, said_at) for x in excerpts]
    wanted_hashes = {content_hash(MemoryKind.EXCERPT, n.content) for n in wanted}
    existing = _stored(deps, session)
    stale = [m.id for m in existing if m.content_hash not in wanted_hashes]
    have = {m.content_hash for m in existing}
    new = [n for n in wanted if content_hash(MemoryKind.EXCERPT, n.content) not in have]
    if new:
        deps.memories.remember_many(caller, new)
    for memory_id in stale:
        deps.memories.forget(caller, memory_id)
    return ExcerptCounts(
        excerpts=len(wanted),
        created=len(new),
        removed=len(stale),
        chars=sum(len(n.content) for n in wanted),
    )


def _stored(deps: PipelineDeps, session: Session) -> list:
    flt = MemoryFilter(
        project=session.project,
        include_team_scope=False,
        kinds=frozenset({MemoryKind.EXCERPT}),
        session_id=session.id,
    )
    caller = pipeline_principal(session)
    out, cursor = [], None
    while True:
        page = deps.memories.list(caller, flt, limit=LIST_PAGE, cursor=cursor)
        out.extend(m for m in page.items if m.provenance.session_id == session.id)
        cursor = page.next_cursor
        if not cursor:
            return out


def _new_memory(
    session: Session, events: EventsDoc, x: Excerpt, outputs: list[LongOutput], said_at: datetime | None
) -> NewMemory:
    key, start, end = _part_lines(events, x.line_start, x.line_end)
    title = f"{'sub-agent step' if x.sidechain else 'step'}: {x.request}" if x.request else None
    details: dict[str, object] = {"session_lines": [x.line_start, x.line_end], "step": x.index}
    if branch := events.switched_branch(x.line_start):
        details["branch"] = branch
    if left_out := left_out_prose(outputs, x.line_start, x.line_end, x.text):
        details[LEFT_OUT] = left_out  # searched, and shown by explicit recall only
    return NewMemory(
        kind=MemoryKind.EXCERPT,
        content=x.text,
        project=session.project,
        title=title,
        tags=(Tag.TRANSCRIPT,),
        confidence=EXCERPT_CONFIDENCE,
        details=details,
        provenance=Provenance(
            session_id=session.id,
            transcript_key=key,
            line_start=start,
            line_end=end,
            agent=session.agent,
            said_by=x.said_by,
            sources=x.sources,
            spans=x.spans,
        ),
        said_at=said_at,
    )


def _part_lines(events: EventsDoc, start: int, end: int) -> tuple[str | None, int, int]:
    """Session line numbers (parts concatenated) as the part's key and its own line numbers."""
    for span in events.parts:
        if span.first_line <= start < span.first_line + span.lines:
            return span.key, start - span.first_line + 1, end - span.first_line + 1
    return None, start, end

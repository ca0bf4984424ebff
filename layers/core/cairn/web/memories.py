"""The memories pages: list, filter and search; one memory with its history and relations; edit, pin,
forget, supersede and feedback.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cairn.domain.errors import InvalidInput, NotFound
from cairn.domain.models import (
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    Scope,
)
from cairn.services.feedback import FeedbackService, Signal
from cairn.services.memories import MemoryPatch, new_memory
from cairn.web.common import Posted, UiRoute, Who, base_path, enum_param, redirect, render, services

MEMORY_PAGE = 25
AGENT_SCAN_PAGES = 20  # the agent filter is applied to listing pages; this bounds one page's scan

router = APIRouter(route_class=UiRoute, include_in_schema=False)


@router.get("/ui/memories")
def memories(request: Request, who: Who) -> Response:
    q = request.query_params
    c = services(request)
    kind = enum_param(MemoryKind, q.get("kind"), "kind")
    scope = enum_param(Scope, q.get("scope"), "scope")
    tag = (q.get("tag") or "").strip().lower()[:100]
    agent = (q.get("agent") or "").strip()[:64]
    flt = MemoryFilter(
        project=(q.get("project") or "").strip()[:300] or None,
        kinds=frozenset({kind}) if kind else None,
        scopes=frozenset({scope}) if scope else None,
        tags=frozenset({tag}) if tag else None,
        session_id=(q.get("session") or "").strip()[:200] or None,
        include_superseded=q.get("superseded") == "1",
    )
    query = (q.get("q") or "").strip()[:1000]
    hits: list[tuple[Memory, float | None]] = []
    next_cursor = None
    degraded = None
    told = []
    if query:
        result = c.recall.recall(who.principal, query, flt, 50)
        hits = [(h.memory, h.score) for h in result.hits if _agent_matches(h.memory, agent)]
        degraded = result.degraded
        # what tools said past what their excerpts show, naming the query's words: apart, as data
        told = [t for t in c.recall.tool_text(who.principal, query, flt) if _agent_matches(t.memory, agent)]
    else:
        cursor = (q.get("cursor") or "")[:500] or None
        for _ in range(AGENT_SCAN_PAGES if agent else 1):
            page = c.memories.list(who.principal, flt, MEMORY_PAGE, cursor)
            hits += [(m, None) for m in page.items if _agent_matches(m, agent)]
            cursor = next_cursor = page.next_cursor
            if not cursor or len(hits) >= MEMORY_PAGE:
                break
    filters = {
        k: v
        for k, v in {
            "project": flt.project or "",
            "kind": kind.value if kind else "",
            "scope": scope.value if scope else "",
            "tag": tag,
            "session": flt.session_id or "",
            "agent": agent,
            "q": query,
            "superseded": "1" if flt.include_superseded else "",
        }.items()
        if v
    }
    page_url = f"{base_path(request)}/ui/memories?"
    next_url = f"{page_url}{urlencode({**filters, 'cursor': next_cursor})}" if next_cursor else None
    return render(
        request,
        who,
        "memories.html",
        nav="memories",
        hits=hits,
        told=told,
        filters=filters,
        searched=bool(query),
        degraded=degraded,
        next_url=next_url,
        first_url=f"{page_url}{urlencode(filters)}" if q.get("cursor") else None,
        kinds=[k.value for k in MemoryKind],
        scopes=[s.value for s in Scope],
    )


def _agent_matches(memory: Memory, agent: str) -> bool:
    return not agent or (memory.provenance.agent or "") == agent


def _history(c: Any, caller: Principal, memory: Memory) -> list[Memory]:
    """The supersession chain through this memory, oldest first (what the caller may see of it)."""
    older: list[Memory] = []
    current = memory
    for _ in range(20):
        rels = [
            r
            for r in c.memories.relations_of(caller, current.id, "out")
            if r.predicate == "supersedes" and r.source_id == current.id
        ]
        if not rels:
            break
        try:
            current = c.memories.get(caller, rels[0].target_id)
        except NotFound:
            break
        older.insert(0, current)
    newer: list[Memory] = []
    current = memory
    for _ in range(20):
        if not current.superseded_by:
            break
        try:
            current = c.memories.get(caller, current.superseded_by)
        except NotFound:
            break
        newer.append(current)
    return [*older, memory, *newer]


def _related(c: Any, caller: Principal, memory: Memory) -> list[dict[str, Any]]:
    out = []
    for r in c.memories.relations_of(caller, memory.id, "both"):
        other_id = r.target_id if r.source_id == memory.id else r.source_id
        try:
            other: Memory | None = c.memories.get(caller, other_id)
        except (NotFound, InvalidInput):
            other = None
        out.append(
            {
                "relation": r,
                "outgoing": r.source_id == memory.id,
                "other_id": other_id,
                "other": other,
            }
        )
    return out


@router.get("/ui/memories/{memory_id}")
def memory_page(memory_id: str, request: Request, who: Who) -> Response:
    c = services(request)
    memory = c.memories.get(who.principal, memory_id)
    feedback = dict(memory.details.get("feedback") or {})
    details = {k: v for k, v in memory.details.items() if k != "feedback"}
    return render(
        request,
        who,
        "memory.html",
        nav="memories",
        m=memory,
        history=_history(c, who.principal, memory),
        related=_related(c, who.principal, memory),
        audit=c.memories.history(who.principal, memory_id),
        feedback=feedback,
        details=details,
        transcript_url=_transcript_url(request, memory.provenance),
        signals=[s.value for s in Signal],
    )


def _transcript_url(request: Request, p: Provenance) -> str | None:
    if not p.session_id:
        return None
    params = {k: v for k, v in {"line_start": p.line_start, "line_end": p.line_end}.items() if v is not None}
    query = f"?{urlencode(params)}" if params else ""
    return f"{base_path(request)}/ui/sessions/{p.session_id}/transcript{query}"


def _tags(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.replace("\n", ",").split(",") if t.strip())


@router.post("/ui/memories/{memory_id}/edit")
def edit_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    patch = MemoryPatch(
        content=form.get("content"),
        title=form.get("title").strip(),
        tags=_tags(form.get("tags")),
    )
    services(request).memories.update(who.principal, memory_id, patch)
    return redirect(request, f"/ui/memories/{memory_id}", "saved")


@router.post("/ui/memories/{memory_id}/pin")
def pin_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    pinned = form.get("pinned") == "1"
    services(request).memories.update(who.principal, memory_id, MemoryPatch(pinned=pinned))
    return redirect(request, f"/ui/memories/{memory_id}", "pinned" if pinned else "unpinned")


@router.post("/ui/memories/{memory_id}/forget")
def forget_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, _ = post
    services(request).memories.forget(who.principal, memory_id)
    return redirect(request, "/ui/memories", "forgotten")


@router.post("/ui/memories/{memory_id}/supersede")
def supersede_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    c = services(request)
    old = c.memories.get(who.principal, memory_id)
    # the form edits the text, title and tags; an empty title or tags field keeps the old ones
    title, tags = form.get("title").strip(), _tags(form.get("tags"))
    new = new_memory({"content": form.get("content"), "title": title or None, "tags": tags or None}, old)
    _, replacement = c.memories.supersede(who.principal, memory_id, new)
    return redirect(request, f"/ui/memories/{replacement.id}", "superseded")


@router.post("/ui/memories/{memory_id}/feedback")
def feedback_memory(memory_id: str, request: Request, post: Posted) -> Response:
    who, form = post
    signal = enum_param(Signal, form.get("signal"), "signal")
    if signal is None:
        raise InvalidInput("choose useful, wrong or stale")
    note = form.get("note").strip()[:500] or None
    FeedbackService(services(request).memories).give(who.principal, memory_id, signal, note)
    return redirect(request, f"/ui/memories/{memory_id}", "feedback")

"""REST routes under /v1: memories, relations, search, sessions, API keys, export/import.

Handlers stay thin: validate (pydantic), call one service with the caller's Principal, shape the reply.
Team confinement lives in the services and adapters, never in a handler's own filtering.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from cairn import __version__
from cairn.api.auth import principal
from cairn.api.errors import JSON_ERROR_RESPONSES
from cairn.api.schemas import KeyIn, MemoryIn, MemoryPatchIn, RelationIn, SearchIn
from cairn.domain import codec
from cairn.domain.details import bounded
from cairn.domain.errors import InvalidInput
from cairn.domain.models import ApiKey, Memory, MemoryFilter, MemoryKind, Principal, Scope
from cairn.services.sessions import visible_sessions
from cairn.services.tool_text import TOOL_TEXT_MARK
from cairn.services.trust import recall_mark

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]


def _c(request: Request):
    return request.app.state.container


def _memory_out(memory: Memory) -> dict:
    """A memory as the API answers it: details nested too deep (stored before the limit) come out as text."""
    return {**codec.encode_memory(memory), "details": bounded(memory.details)}


def _key_out(key: ApiKey) -> dict:
    out = codec.encode_key(key)
    out.pop("key_hash")
    return out


@router.get("/health")
def health(request: Request) -> dict:
    return {"status": "ok", "version": __version__, "mode": _c(request).settings.mode}


@router.get("/whoami")
def whoami(caller: Caller) -> dict:
    return {
        "team_id": caller.team_id,
        "member": caller.member,
        "key_id": caller.key_id,
        "scopes": sorted(s.value for s in caller.scopes),
        "projects": None if caller.projects is None else sorted(caller.projects),
    }


# --- memories ---------------------------------------------------------------------------------
@router.post("/memories", status_code=201)
def remember(body: MemoryIn, caller: Caller, request: Request) -> dict:
    return _memory_out(_c(request).memories.remember(caller, body.to_domain()))


@router.get("/memories")
def list_memories(
    caller: Caller,
    request: Request,
    project: Annotated[str | None, Query(max_length=300)] = None,
    kind: Annotated[list[MemoryKind] | None, Query()] = None,
    scope: Annotated[list[Scope] | None, Query()] = None,
    tag: Annotated[list[str] | None, Query()] = None,
    session_id: Annotated[str | None, Query(max_length=200)] = None,
    include_superseded: bool = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> dict:
    flt = MemoryFilter(
        project=project,
        kinds=frozenset(kind) if kind else None,
        scopes=frozenset(scope) if scope else None,
        tags=frozenset(tag) if tag else None,
        session_id=session_id,
        include_superseded=include_superseded,
    )
    page = _c(request).memories.list(caller, flt, limit, cursor)
    return {"items": [_memory_out(m) for m in page.items], "next_cursor": page.next_cursor}


@router.get("/memories/{memory_id}")
def get_memory(memory_id: str, caller: Caller, request: Request) -> dict:
    return _memory_out(_c(request).memories.get(caller, memory_id))


@router.patch("/memories/{memory_id}")
def update_memory(memory_id: str, body: MemoryPatchIn, caller: Caller, request: Request) -> dict:
    return _memory_out(_c(request).memories.update(caller, memory_id, body.to_domain()))


@router.delete("/memories/{memory_id}", status_code=204)
def forget(memory_id: str, caller: Caller, request: Request) -> Response:
    _c(request).memories.forget(caller, memory_id)
    return Response(status_code=204)


@router.post("/memories/{memory_id}/supersede", status_code=201)
def supersede(memory_id: str, body: MemoryIn, caller: Caller, request: Request) -> dict:
    old, new = _c(request).memories.supersede(caller, memory_id, body.to_domain())
    return {"superseded": _memory_out(old), "memory": _memory_out(new)}


@router.get("/memories/{memory_id}/relations")
def relations_of(
    memory_id: str,
    caller: Caller,
    request: Request,
    direction: Annotated[str, Query(pattern="^(in|out|both)$")] = "both",
) -> dict:
    rels = _c(request).memories.relations_of(caller, memory_id, direction)
    return {"items": [codec.encode_relation(r) for r in rels]}


@router.post("/relations", status_code=201)
def relate(body: RelationIn, caller: Caller, request: Request) -> dict:
    rel = _c(request).memories.relate(caller, body.source_id, body.predicate, body.target_id, body.weight)
    return codec.encode_relation(rel)


@router.delete("/relations/{relation_id}", status_code=204)
def unrelate(relation_id: str, caller: Caller, request: Request) -> Response:
    _c(request).memories.unrelate(caller, relation_id)
    return Response(status_code=204)


# --- search -----------------------------------------------------------------------------------
@router.post("/search")
def search(body: SearchIn, caller: Caller, request: Request) -> dict:
    result = _c(request).recall.recall(caller, body.query, body.to_filter(), body.limit)
    hits = []
    for h in result.hits:
        hit = {
            "memory": _memory_out(h.memory),
            "score": h.score,
            "lexical_rank": h.lexical_rank,
            "semantic_rank": h.semantic_rank,
            "via": h.via,
        }
        # found when asked for, marked: text a tool supplied that reads as instructions (`trust`)
        if mark := recall_mark(h.memory):
            hit["untrusted"] = mark
        hits.append(hit)
    out: dict = {"hits": hits, "degraded": result.degraded}
    # what tools said past what their excerpts show, that bears on the query: apart from the ranked hits
    if told := _c(request).recall.tool_text(caller, body.query, body.to_filter()):
        out["tool_text"] = [
            {"memory": _memory_out(h.memory), "lines": h.lines, "score": h.score, "untrusted": TOOL_TEXT_MARK}
            for h in told
        ]
    return out


# --- sessions ---------------------------------------------------------------------------------
@router.get("/sessions")
def list_sessions(
    caller: Caller,
    request: Request,
    project: Annotated[str | None, Query(max_length=300)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> dict:
    page = visible_sessions(caller, _c(request).sessions, project, limit, cursor)
    return {"items": [codec.encode_session(s) for s in page.items], "next_cursor": page.next_cursor}


# --- admin: keys, export, import --------------------------------------------------------------
@router.post("/admin/keys", status_code=201)
def create_key(body: KeyIn, caller: Caller, request: Request) -> dict:
    key, secret = _c(request).keys.create_key(
        caller,
        body.member,
        body.name,
        frozenset(body.scopes),
        body.expires_in(),
        None if body.projects is None else frozenset(body.projects),
    )
    return {"key": _key_out(key), "secret": secret}


@router.get("/admin/keys")
def list_keys(caller: Caller, request: Request) -> dict:
    return {"items": [_key_out(k) for k in _c(request).keys.list_keys(caller)]}


@router.delete("/admin/keys/{key_id}")
def revoke_key(key_id: str, caller: Caller, request: Request) -> dict:
    return _key_out(_c(request).keys.revoke_key(caller, key_id))


class NdjsonResponse(StreamingResponse):
    media_type = "application/x-ndjson"


@router.get(
    "/admin/export",
    response_class=NdjsonResponse,
    responses={
        200: {"description": "One JSON object per line: sessions, then memories, then relations."},
        **JSON_ERROR_RESPONSES,
    },
)
def export(caller: Caller, request: Request) -> StreamingResponse:
    lines = _c(request).portability.export_lines(caller)
    first = next(lines, None)  # authorisation errors surface before the stream starts

    def body():
        if first is not None:
            yield first + "\n"
        for line in lines:
            yield line + "\n"

    return NdjsonResponse(body())


@router.post("/admin/import")
async def import_lines(caller: Caller, request: Request) -> dict:
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput("import body must be UTF-8 JSON lines") from exc
    report = await run_in_threadpool(_c(request).portability.import_lines, caller, text.splitlines())
    return {
        "memories": report.memories,
        "relations": report.relations,
        "sessions": report.sessions,
        "skipped": report.skipped,
    }

"""One JSON-safe encoding of the domain objects, used by every store, the export format and the API.

Datetimes are ISO-8601 in UTC, enums their values, frozensets sorted lists. `decode_*` accepts what
`encode_*` produced and nothing looser: an unknown or missing field is an InvalidInput, so an import
never half-loads a record.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from cairn.domain.errors import InvalidInput
from cairn.domain.models import (
    SAID_BY,
    SPAN_SAID_BY,
    ApiKey,
    KeyScope,
    Memory,
    MemoryKind,
    Provenance,
    Relation,
    Scope,
    Session,
    Source,
    Span,
    Team,
)


def dt_out(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def dt_in(value: str | None) -> datetime | None:
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def encode_memory(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "team_id": m.team_id,
        "kind": m.kind.value,
        "content": m.content,
        "scope": m.scope.value,
        "project": m.project,
        "owner": m.owner,
        "title": m.title,
        "tags": list(m.tags),
        "pinned": m.pinned,
        "confidence": m.confidence,
        "details": dict(m.details),
        "provenance": {
            "session_id": m.provenance.session_id,
            "transcript_key": m.provenance.transcript_key,
            "line_start": m.provenance.line_start,
            "line_end": m.provenance.line_end,
            "agent": m.provenance.agent,
            "said_by": m.provenance.said_by,
            "sources": [encode_source(x) for x in m.provenance.sources],
            "member": m.provenance.member,
            "key_id": m.provenance.key_id,
            # [chars, said_by, source index]: an excerpt has dozens, kept short
            "spans": [[x.chars, x.said_by, x.source] for x in m.provenance.spans],
        },
        "valid_from": dt_out(m.valid_from),
        "valid_to": dt_out(m.valid_to),
        "superseded_by": m.superseded_by,
        "created_at": dt_out(m.created_at),
        "updated_at": dt_out(m.updated_at),
        "access_count": m.access_count,
        "last_accessed_at": dt_out(m.last_accessed_at),
        "content_hash": m.content_hash,
        "embedding_version": m.embedding_version,
    }


def encode_source(x: Source) -> dict[str, Any]:
    return {"tool": x.tool, "target": x.target, "trusted": x.trusted, "directive": x.directive}


def decode_provenance(p: dict[str, Any]) -> Provenance:
    """A memory's provenance; one written before who-said-it was recorded loads with it unknown."""
    known = {f.name for f in fields(Provenance)}
    if set(p) - known:
        raise InvalidInput("provenance record does not match the format", unknown=sorted(set(p) - known))
    said_by = p.get("said_by")
    if said_by is not None and said_by not in SAID_BY:
        raise InvalidInput(f"provenance said_by must be one of {sorted(SAID_BY)}")
    return Provenance(
        **{k: v for k, v in p.items() if k not in ("sources", "spans")},
        sources=tuple(
            Source(
                tool=str(x["tool"]),
                target=x.get("target"),
                trusted=bool(x.get("trusted", False)),
                directive=x.get("directive"),
            )
            for x in p.get("sources") or ()
        ),
        spans=tuple(_span(x) for x in p.get("spans") or ()),
    )


def _span(x: Any) -> Span:
    if not isinstance(x, list | tuple) or len(x) != 3 or x[1] not in SPAN_SAID_BY:
        raise InvalidInput("provenance span must be [chars, said_by, source]")
    chars, said_by, source = x
    return Span(int(chars), said_by, None if source is None else int(source))


def _check_keys(d: dict[str, Any], cls: type, what: str) -> None:
    expected = {f.name for f in fields(cls)}
    if set(d) != expected:
        missing, unknown = sorted(expected - set(d)), sorted(set(d) - expected)
        raise InvalidInput(f"{what} record does not match the format", missing=missing, unknown=unknown)


def decode_memory(d: dict[str, Any]) -> Memory:
    _check_keys(d, Memory, "memory")
    try:
        p = d["provenance"]
        return Memory(
            id=d["id"],
            team_id=d["team_id"],
            kind=MemoryKind(d["kind"]),
            content=d["content"],
            scope=Scope(d["scope"]),
            project=d["project"],
            owner=d["owner"],
            title=d["title"],
            tags=tuple(d["tags"]),
            pinned=bool(d["pinned"]),
            confidence=float(d["confidence"]),
            details=dict(d["details"]),
            provenance=decode_provenance(p),
            valid_from=dt_in(d["valid_from"]),  # type: ignore[arg-type]
            valid_to=dt_in(d["valid_to"]),
            superseded_by=d["superseded_by"],
            created_at=dt_in(d["created_at"]),  # type: ignore[arg-type]
            updated_at=dt_in(d["updated_at"]),  # type: ignore[arg-type]
            access_count=int(d["access_count"]),
            last_accessed_at=dt_in(d["last_accessed_at"]),
            content_hash=d["content_hash"],
            embedding_version=d["embedding_version"],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"memory record is malformed: {exc}") from exc


def encode_relation(r: Relation) -> dict[str, Any]:
    return {
        "id": r.id,
        "team_id": r.team_id,
        "source_id": r.source_id,
        "predicate": r.predicate,
        "target_id": r.target_id,
        "created_at": dt_out(r.created_at),
        "valid_from": dt_out(r.valid_from),
        "valid_to": dt_out(r.valid_to),
        "weight": r.weight,
    }


def decode_relation(d: dict[str, Any]) -> Relation:
    _check_keys(d, Relation, "relation")
    try:
        return Relation(
            id=d["id"],
            team_id=d["team_id"],
            source_id=d["source_id"],
            predicate=d["predicate"],
            target_id=d["target_id"],
            created_at=dt_in(d["created_at"]),  # type: ignore[arg-type]
            valid_from=dt_in(d["valid_from"]),  # type: ignore[arg-type]
            valid_to=dt_in(d["valid_to"]),
            weight=float(d["weight"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"relation record is malformed: {exc}") from exc


def encode_session(s: Session) -> dict[str, Any]:
    return {
        "id": s.id,
        "team_id": s.team_id,
        "project": s.project,
        "agent": s.agent,
        "member": s.member,
        "started_at": dt_out(s.started_at),
        "ended_at": dt_out(s.ended_at),
        "transcript_keys": list(s.transcript_keys),
        "status": s.status,
        "stats": dict(s.stats),
        "updated_at": dt_out(s.updated_at),
    }


def decode_session(d: dict[str, Any]) -> Session:
    _check_keys(d, Session, "session")
    try:
        return Session(
            id=d["id"],
            team_id=d["team_id"],
            project=d["project"],
            agent=d["agent"],
            member=d["member"],
            started_at=dt_in(d["started_at"]),
            ended_at=dt_in(d["ended_at"]),
            transcript_keys=tuple(d["transcript_keys"]),
            status=d["status"],
            stats=dict(d["stats"]),
            updated_at=dt_in(d["updated_at"]),  # type: ignore[arg-type]
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"session record is malformed: {exc}") from exc


def encode_team(t: Team) -> dict[str, Any]:
    return {"id": t.id, "name": t.name, "created_at": dt_out(t.created_at)}


def decode_team(d: dict[str, Any]) -> Team:
    _check_keys(d, Team, "team")
    return Team(id=d["id"], name=d["name"], created_at=dt_in(d["created_at"]))  # type: ignore[arg-type]


def encode_key(k: ApiKey) -> dict[str, Any]:
    return {
        "id": k.id,
        "team_id": k.team_id,
        "member": k.member,
        "name": k.name,
        "key_hash": k.key_hash,
        "prefix": k.prefix,
        "scopes": sorted(s.value for s in k.scopes),
        "created_at": dt_out(k.created_at),
        "expires_at": dt_out(k.expires_at),
        "revoked_at": dt_out(k.revoked_at),
        "last_used_at": dt_out(k.last_used_at),
        "projects": None if k.projects is None else sorted(k.projects),
    }


def decode_key(d: dict[str, Any]) -> ApiKey:
    d = {"projects": None, **d}  # keys stored before keys could be limited to projects reach them all
    _check_keys(d, ApiKey, "api key")
    try:
        return ApiKey(
            id=d["id"],
            team_id=d["team_id"],
            member=d["member"],
            name=d["name"],
            key_hash=d["key_hash"],
            prefix=d["prefix"],
            scopes=frozenset(KeyScope(s) for s in d["scopes"]),
            created_at=dt_in(d["created_at"]),  # type: ignore[arg-type]
            expires_at=dt_in(d["expires_at"]),
            revoked_at=dt_in(d["revoked_at"]),
            last_used_at=dt_in(d["last_used_at"]),
            projects=None if d["projects"] is None else frozenset(str(p) for p in d["projects"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"api key record is malformed: {exc}") from exc

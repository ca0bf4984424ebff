"""The audit trail's entry, its actions, and the request an entry is recorded for.

An entry says who (member, key, agent) did what (action) to what (a memory, key, project or team), when,
and in which request. Entries are written by the services, where the caller's Principal is known, so a
write through REST, MCP, the CLI, the web UI or the pipeline is recorded once whatever the surface.
Nothing secret goes in an entry: a redaction records how much it changed, never the string it removed.

The request id rides on a context variable: the API's outermost middleware sets it (API Gateway's
request id in AWS, a fresh one locally), the pipeline sets its run's, and a service reads it when it
records; code that runs outside a request (the CLI's own admin commands) records a fresh id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from cairn.domain.codec import dt_in, dt_out
from cairn.domain.errors import InvalidInput
from cairn.domain.ids import new_id


class AuditAction(StrEnum):
    WRITE = "write"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    FORGET = "forget"
    FEEDBACK = "feedback"
    OUTCOME = "outcome"  # a procedure's success or failure reported
    DELIVER = "deliver"  # a handoff handed over
    RELATE = "relate"
    UNRELATE = "unrelate"
    KEY_CREATE = "key-create"
    KEY_REVOKE = "key-revoke"
    TEAM_CREATE = "team-create"
    EXPORT = "export"
    IMPORT = "import"
    REDACT = "redact"
    REPROCESS = "reprocess"
    UPLOAD = "upload"  # a session's transcript granted or received


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a request tells the audit trail beyond the Principal: its id and, when known, the agent."""

    request_id: str
    agent: str | None = None


_current: ContextVar[RequestContext | None] = ContextVar("cairn_request", default=None)


def current_request() -> RequestContext:
    """The request this code runs for; outside any, a fresh id so every entry can be told apart."""
    return _current.get() or RequestContext(request_id=new_id("req"))


@contextmanager
def in_request(request_id: str, agent: str | None = None) -> Iterator[RequestContext]:
    context = RequestContext(request_id=request_id[:200], agent=(agent or None) and agent[:100])
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: str
    team_id: str
    action: AuditAction
    target: str  # mem_..., key_..., rel_..., a session id, a project name or the team id
    at: datetime
    member: str
    key_id: str
    agent: str | None = None
    request_id: str | None = None
    project: str | None = None
    # counts and ids only (what a supersede replaced, how many memories a redaction changed)
    details: Mapping[str, Any] = field(default_factory=dict)


def new_entry(
    team_id: str,
    member: str,
    key_id: str,
    action: AuditAction,
    target: str,
    at: datetime,
    *,
    agent: str | None = None,
    project: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """An entry of the current request: its id, and its agent unless the caller names one."""
    request = current_request()
    return AuditEntry(
        id=new_id("aud"),
        team_id=team_id,
        action=action,
        target=target,
        at=at,
        member=member,
        key_id=key_id,
        agent=request.agent or agent,
        request_id=request.request_id,
        project=project,
        details=dict(details or {}),
    )


def encode_entry(e: AuditEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "team_id": e.team_id,
        "action": e.action.value,
        "target": e.target,
        "at": dt_out(e.at),
        "member": e.member,
        "key_id": e.key_id,
        "agent": e.agent,
        "request_id": e.request_id,
        "project": e.project,
        "details": dict(e.details),
    }


def decode_entry(d: Mapping[str, Any]) -> AuditEntry:
    try:
        return AuditEntry(
            id=d["id"],
            team_id=d["team_id"],
            action=AuditAction(d["action"]),
            target=d["target"],
            at=dt_in(d["at"]),  # type: ignore[arg-type]
            member=d["member"],
            key_id=d["key_id"],
            agent=d.get("agent"),
            request_id=d.get("request_id"),
            project=d.get("project"),
            details=dict(d.get("details") or {}),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInput(f"not an audit entry: {exc}") from exc

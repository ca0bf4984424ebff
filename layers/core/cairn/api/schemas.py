"""Request models of the REST API (pydantic at the edge; unknown fields are refused), and the response
models of routes whose answer has a fixed shape (so the OpenAPI document describes it).

Each request model turns itself into the service's frozen input with `to_domain()`; a response model
is built from the service's frozen result with `from_domain()`.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cairn.domain.details import MAX_DETAILS_BYTES, MAX_DETAILS_DEPTH, depth, too_deep_message
from cairn.domain.models import KeyScope, MemoryFilter, MemoryKind, Scope
from cairn.domain.vocabulary import TITLE_CHARS
from cairn.services.digest import Change, Closing, Digest, DigestItem, SessionDigest
from cairn.services.memories import MAX_CONTENT_CHARS, MemoryPatch, NewMemory, new_memory

Tag = Annotated[str, Field(min_length=1, max_length=64)]
ProjectKey = Annotated[str, Field(min_length=1, max_length=300)]
MAX_QUERY_CHARS = 2_000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _details_size(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Refuse details nested too deep (checked first: it bounds the size check's recursion) or too big."""
    if value is None:
        return value
    if depth(value, MAX_DETAILS_DEPTH) > MAX_DETAILS_DEPTH:
        raise ValueError(too_deep_message())
    if len(json.dumps(value, default=str)) > MAX_DETAILS_BYTES:
        raise ValueError(f"details must be at most {MAX_DETAILS_BYTES} bytes of JSON")
    return value


class ProvenanceIn(Strict):
    session_id: str | None = Field(default=None, max_length=200)
    transcript_key: str | None = Field(default=None, max_length=1024)
    line_start: int | None = Field(default=None, ge=0)
    line_end: int | None = Field(default=None, ge=0)
    agent: str | None = Field(default=None, max_length=64)


class MemoryIn(Strict):
    kind: MemoryKind
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    scope: Scope = Scope.PROJECT
    project: ProjectKey | None = None
    title: str | None = Field(default=None, max_length=TITLE_CHARS)
    tags: list[Tag] = Field(default_factory=list, max_length=32)
    pinned: bool = False
    confidence: float = Field(default=0.5, ge=0, le=1)
    details: dict[str, Any] = Field(default_factory=dict)
    provenance: ProvenanceIn | None = None

    _details = field_validator("details")(_details_size)

    def to_domain(self) -> NewMemory:
        return new_memory(self.model_dump())


class MemoryPatchIn(Strict):
    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    title: str | None = Field(default=None, max_length=TITLE_CHARS)
    tags: list[Tag] | None = Field(default=None, max_length=32)
    pinned: bool | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    details: dict[str, Any] | None = None

    _details = field_validator("details")(_details_size)

    def to_domain(self) -> MemoryPatch:
        return MemoryPatch(
            content=self.content,
            title=self.title,
            tags=tuple(self.tags) if self.tags is not None else None,
            pinned=self.pinned,
            confidence=self.confidence,
            details=self.details,
        )


class RelationIn(Strict):
    source_id: str = Field(max_length=64)
    predicate: str = Field(max_length=32)
    target_id: str = Field(max_length=64)
    weight: float = Field(default=1.0, ge=0, le=10)


class SearchIn(Strict):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    project: ProjectKey | None = None
    include_team: bool = True
    kinds: list[MemoryKind] | None = None
    scopes: list[Scope] | None = None
    tags: list[Tag] | None = None
    include_superseded: bool = False
    limit: int = Field(default=10, ge=1, le=100)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be empty")
        return value

    def to_filter(self) -> MemoryFilter:
        return MemoryFilter(
            project=self.project,
            include_team_scope=self.include_team,
            kinds=frozenset(self.kinds) if self.kinds else None,
            scopes=frozenset(self.scopes) if self.scopes else None,
            tags=frozenset(self.tags) if self.tags else None,
            include_superseded=self.include_superseded,
        )


class KeyIn(Strict):
    member: str = Field(min_length=1, max_length=100)
    name: str = Field(default="default", min_length=1, max_length=100)
    scopes: list[KeyScope] = Field(default_factory=lambda: [KeyScope.READ, KeyScope.WRITE], min_length=1)
    expires_in_days: int | None = Field(default=None, ge=1, le=3650)
    # the projects the key reaches (reads and writes only those); absent or null: every project
    projects: list[Annotated[str, Field(min_length=1, max_length=300)]] | None = Field(
        default=None, min_length=1, max_length=100
    )

    def expires_in(self) -> timedelta | None:
        return timedelta(days=self.expires_in_days) if self.expires_in_days else None


class TeamIn(Strict):
    name: str = Field(min_length=1, max_length=100)
    admin_member: str = Field(min_length=1, max_length=100)


# --- the digest (GET /v1/projects/{project}/digest) --------------------------------------------------
class DigestItemOut(BaseModel):
    id: str
    kind: str
    text: str = Field(description="One line: the memory's content, or its title when the content is long.")
    session_id: str | None = None
    origin: str | None = Field(
        default=None, description="The tool whose output this text is, when not the user's or agent's."
    )

    @classmethod
    def from_domain(cls, i: DigestItem) -> DigestItemOut:
        return cls(id=i.id, kind=i.kind, text=i.text, session_id=i.session_id, origin=i.origin)


class ChangeOut(BaseModel):
    old: DigestItemOut
    new: DigestItemOut
    session_id: str | None = Field(description="The session that superseded the old memory.")

    @classmethod
    def from_domain(cls, c: Change) -> ChangeOut:
        return cls(
            old=DigestItemOut.from_domain(c.old),
            new=DigestItemOut.from_domain(c.new),
            session_id=c.session_id,
        )


class ClosingOut(BaseModel):
    item: DigestItemOut
    session_id: str = Field(description="The session that closed the item (its `details.closed_by`).")
    evidence: str | None = None

    @classmethod
    def from_domain(cls, c: Closing) -> ClosingOut:
        return cls(item=DigestItemOut.from_domain(c.item), session_id=c.session_id, evidence=c.evidence)


class SessionDigestOut(BaseModel):
    id: str
    agent: str
    member: str | None
    status: str
    started_at: datetime | None
    ended_at: datetime | None
    request: str | None = Field(description="The session's last real request.")
    outcome: str | None = Field(description="What the agent reported of it, or the session's newest episode.")
    learned: dict[str, list[DigestItemOut]] = Field(
        description="New memories by kind: decision, fact, procedure, preference, pattern."
    )
    changed: list[ChangeOut]
    closed: list[ClosingOut]
    withheld: int = Field(
        description="Memories left out: tool output that reads as instructions to an agent."
    )

    @classmethod
    def from_domain(cls, s: SessionDigest) -> SessionDigestOut:
        return cls(
            id=s.id,
            agent=s.agent,
            member=s.member,
            status=s.status,
            started_at=s.started_at,
            ended_at=s.ended_at,
            request=s.request,
            outcome=s.outcome,
            learned={k: [DigestItemOut.from_domain(i) for i in v] for k, v in s.learned.items()},
            changed=[ChangeOut.from_domain(c) for c in s.changed],
            closed=[ClosingOut.from_domain(c) for c in s.closed],
            withheld=s.withheld,
        )


class DigestOut(BaseModel):
    """What happened in a project over a window of sessions, oldest first, and what is still open."""

    project: str
    window: str = Field(description='"last N sessions" or "since <date>".')
    sessions: list[SessionDigestOut]
    still_open: list[DigestItemOut]
    next_steps: list[str]
    open_questions: list[str]
    handoff_session: str | None = Field(
        description="The session whose handoff left the next steps and questions."
    )
    markdown: str = Field(
        description="The digest as compact text within the token budget, as an agent reads it."
    )
    tokens: int
    partial: bool = Field(description="The project has more history than one digest reads.")

    @classmethod
    def from_domain(cls, d: Digest) -> DigestOut:
        return cls(
            project=d.project,
            window=d.window,
            sessions=[SessionDigestOut.from_domain(s) for s in d.sessions],
            still_open=[DigestItemOut.from_domain(i) for i in d.still_open],
            next_steps=list(d.next_steps),
            open_questions=list(d.open_questions),
            handoff_session=d.handoff_session,
            markdown=d.markdown,
            tokens=d.tokens,
            partial=d.partial,
        )

"""The memory model: teams, keys, projects, sessions, memories and relations.

Frozen dataclasses with no I/O. Adapters persist them; services create new versions with
`dataclasses.replace` instead of mutating, so a memory read from a store is never changed behind
the store's back.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from cairn.domain.errors import OutsideProjects
from cairn.domain.vocabulary import SessionStatus

T = TypeVar("T")


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(t: datetime) -> datetime:
    """`t` with a time zone: a naive time is UTC, as every time Cairn writes."""
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


class MemoryKind(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    PATTERN = "pattern"
    PROCEDURE = "procedure"
    DECISION = "decision"
    EPISODE = "episode"
    REFLECTION = "reflection"
    HANDOFF = "handoff"
    # a step of a session's transcript, rendered compactly: written by the pipeline so nothing said is
    # lost, searchable with memories, never part of the session-start block
    EXCERPT = "excerpt"


class Scope(StrEnum):
    PROJECT = "project"
    TEAM = "team"  # team-global: promoted or written for every project of the team
    PERSONAL = "personal"  # visible only to the member who owns it


class KeyScope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


# admin implies write implies read
_SCOPE_RANK = {KeyScope.READ: 0, KeyScope.WRITE: 1, KeyScope.ADMIN: 2}


@dataclass(frozen=True, slots=True)
class Team:
    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A member's key. Only `key_hash` is stored; the secret is shown once at creation."""

    id: str
    team_id: str
    member: str
    name: str
    key_hash: str
    prefix: str  # first characters of the secret, so a user can tell keys apart
    scopes: frozenset[KeyScope]
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    # the projects this key reaches; None: every project of the team (`Principal.projects`)
    projects: frozenset[str] | None = None

    def allows(self, needed: KeyScope) -> bool:
        return any(_SCOPE_RANK[s] >= _SCOPE_RANK[needed] for s in self.scopes)

    def principal(self) -> Principal:
        return Principal(self.team_id, self.member, self.id, self.scopes, self.projects)

    def is_active(self, now: datetime) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or now < self.expires_at


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the team every query is confined to, what the key may do, and the projects it
    reaches (None: all of the team's).

    A key limited to projects reads memories of those projects and memories of no project (team-global
    ones, and the caller's own personal ones without a project): team-wide knowledge is what every
    project of the team is meant to see. It writes only memories of its projects: never a team-global
    memory, which every other project would read. Sessions of other projects (or of none) are unseen.
    Something named by id that the key may not see answers NotFound, as for another team's, so its
    existence does not leak; a project named outright answers Forbidden, whether it exists or not."""

    team_id: str
    member: str
    key_id: str
    scopes: frozenset[KeyScope]
    projects: frozenset[str] | None = None

    def allows(self, needed: KeyScope) -> bool:
        return any(_SCOPE_RANK[s] >= _SCOPE_RANK[needed] for s in self.scopes)

    # What a caller may see is decided here, for every service and so every surface: a restriction of a
    # key (to some projects, say) is added to these and holds everywhere.
    def confine(self, flt: MemoryFilter) -> MemoryFilter:
        """`flt` narrowed to what this caller may see: no other member's personal memories, and for a
        key limited to projects, those projects' memories and team-global ones. A filter naming a
        project outside the key's is refused (Forbidden)."""
        if self.projects is None:
            return replace(flt, member=self.member)
        if flt.project is not None:
            self.check_project(flt.project)
        return replace(flt, member=self.member, projects=self.projects)

    def sees(self, memory: Memory) -> bool:
        """Whether this caller may see `memory` (of its team): `confine`'s rule for one memory."""
        if memory.scope is Scope.PERSONAL and memory.owner != self.member:
            return False
        return self.projects is None or memory.project is None or memory.project in self.projects

    def reaches(self, project: str | None) -> bool:
        """Whether this key reaches `project`: always for an unlimited key; None (no project, a session
        never tied to one) only for an unlimited key."""
        return self.projects is None or project in self.projects

    def check_project(self, project: str | None) -> None:
        """Forbidden unless this key reaches `project`: a project a request names, to read or write, or
        the project of a memory to be written (so a limited key never writes a team-global memory)."""
        if not self.reaches(project):
            raise OutsideProjects(self._outside(project))

    def _outside(self, project: str | None) -> str:
        what = f"project {project!r}" if project is not None else "team-wide memories or sessions"
        return f"this key is limited to the projects {', '.join(sorted(self.projects or ()))}: not {what}"

    def sees_session(self, session: Session) -> bool:
        return self.reaches(session.project)


SAID_BY = frozenset({"user", "agent", "tool", "mixed"})
SPAN_SAID_BY = frozenset({"user", "agent", "tool"})


@dataclass(frozen=True, slots=True)
class Source:
    """One tool whose returned text a memory holds: which tool, the command, file, URL or query it was
    given, and whether its text is trusted (a file of the repository) or not (the web, a command's
    output, a dependency's docs, a file outside the repository, another MCP server). `directive` is
    the cue by which that text read as instructions to an agent, when it did (`cairn.services.trust`)."""

    tool: str
    target: str | None = None
    trusted: bool = False
    directive: str | None = None


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of a memory's text that one speaker said: `chars` characters of its content (a text of
    several speakers is its spans in order, a newline between two), who said them (user, agent or
    tool: a compaction summary, a sub-agent's report and a harness's notice are tools' text too), and
    the source, an index into the provenance's `sources`: the tool whose text it is, or whose text the
    agent's words pass on."""

    chars: int
    said_by: str
    source: int | None = None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory was learned: the session, the transcript object, and the lines in it; who said
    it (`said_by`: the user typed it, the agent wrote it, a tool returned it, or a mix, as in a
    transcript excerpt), the tools whose output it holds, the member and key that wrote it, and, for a
    text of several speakers, who said each stretch of it (`spans`).
    Records written before these fields existed load with them empty (unknown)."""

    session_id: str | None = None
    transcript_key: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    agent: str | None = None
    said_by: str | None = None
    sources: tuple[Source, ...] = ()
    member: str | None = None
    key_id: str | None = None
    spans: tuple[Span, ...] = ()


# an excerpt's detail: what its text leaves out of its long tool outputs, their requests, sentences and
# wordiest lines (`pipeline.reading.left_out`), searched apart from the rest (`ports.ToolTextSearch`)
LEFT_OUT = "left_out"


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    team_id: str
    kind: MemoryKind
    content: str
    scope: Scope = Scope.PROJECT
    project: str | None = None  # None only for team-global memories
    owner: str | None = None  # the member, for personal memories
    title: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    confidence: float = 0.5
    # kind-specific fields: procedure steps/success_count/failure_count, decision rationale/alternatives,
    # episode outcome, handoff next_steps/open_questions/errors ... validated at the edges
    details: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    # when it was said: for what a session taught, that session's last dated transcript event
    # (`pipeline.models.taught_at`, else `Session.ran_at`); for a caller's own write, its writing.
    # Sessions are ordered by it, not by when the pipeline got to them (a long session learned after a
    # later short one, a retried upload, a backfill): `created_at` is when Cairn wrote it
    valid_from: datetime = field(default_factory=utcnow)
    valid_to: datetime | None = None
    superseded_by: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    access_count: int = 0
    last_accessed_at: datetime | None = None
    content_hash: str = ""
    embedding_version: str | None = None

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None and self.valid_to is None

    @property
    def tool_text(self) -> str:
        """What an excerpt leaves out of its tools' outputs (`LEFT_OUT`), or ""."""
        told = self.details.get(LEFT_OUT) if self.kind is MemoryKind.EXCERPT else None
        return told if isinstance(told, str) else ""

    def search_text(self) -> str:
        """What the search index sees: title, content and tags. A transcript excerpt is found by its own
        words: its title repeats the request of its step, which every excerpt of a long step shares, and
        would make all of them match whatever matches the request."""
        if self.kind is MemoryKind.EXCERPT:
            return self.content
        parts = [self.title or "", self.content, " ".join(self.tags)]
        return "\n".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class Relation:
    id: str
    team_id: str
    source_id: str
    predicate: str  # uses, fixes, caused-by, supersedes, part-of, relates-to ...
    target_id: str
    created_at: datetime = field(default_factory=utcnow)
    valid_from: datetime = field(default_factory=utcnow)
    valid_to: datetime | None = None
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    team_id: str
    project: str | None
    agent: str
    member: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    transcript_keys: tuple[str, ...] = ()
    status: str = SessionStatus.RECEIVED  # a SessionStatus: received -> processing -> learned | failed
    stats: Mapping[str, Any] = field(default_factory=dict)
    updated_at: datetime = field(default_factory=utcnow)

    @property
    def ran_at(self) -> datetime | None:
        """When the session ran, as far as its record knows: its start (the transcript's, or its first
        upload's), else its end. The dream pass orders sessions by it; what a session taught is dated by
        its transcript's last event when it has one (`pipeline.models.taught_at`)."""
        return self.started_at or self.ended_at


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """What a listing or a recall is confined to, beyond the team (which is always required)."""

    project: str | None = None
    include_team_scope: bool = True  # project queries also see team-global memories
    scopes: frozenset[Scope] | None = None
    kinds: frozenset[MemoryKind] | None = None
    member: str | None = None  # personal memories are seen only by their owner
    tags: frozenset[str] | None = None
    session_id: str | None = None
    include_superseded: bool = False
    # a key limited to projects (`Principal.confine`): these projects' memories and those of no project
    projects: frozenset[str] | None = None

    def admits(self, m: Memory) -> bool:
        """The one definition of the filter; adapters that push it down must agree with this."""
        if not self.include_superseded and not m.is_current:
            return False
        if self.kinds and m.kind not in self.kinds:
            return False
        if self.scopes and m.scope not in self.scopes:
            return False
        if m.scope is Scope.PERSONAL and m.owner != self.member:
            return False
        if self.project is not None:
            in_project = m.project == self.project
            if not (in_project or (self.include_team_scope and m.scope is Scope.TEAM)):
                return False
        if self.projects is not None and m.project is not None and m.project not in self.projects:
            return False
        if self.tags and not self.tags.intersection(m.tags):
            return False
        return not (self.session_id and m.provenance.session_id != self.session_id)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryCount:
    """How many memories a filter admits with this project, scope and kind (an overview's row)."""

    project: str | None
    scope: Scope
    kind: MemoryKind
    count: int


@dataclass(frozen=True, slots=True)
class IndexedMemory:
    """What the search index stores for one memory: its text, vector and filter fields."""

    memory: Memory
    vector: tuple[float, ...] | None
    # what the vector was computed from (`vector_key`): lets an index hand a known vector back instead
    # of the text being embedded again
    text_key: str | None = None


class ModelVector(list[float]):
    """A query vector that names the model that made it: an index that keeps models apart compares it
    only with vectors of the same model (a query embedded just before a swap of served models)."""

    __slots__ = ("version",)

    def __init__(self, values: Iterable[float], version: str) -> None:
        super().__init__(values)
        self.version = version


def vector_key(model_version: str, text: str) -> str:
    """A vector's identity: the embedding model and the exact text it embedded."""
    return hashlib.sha1(f"{model_version}\n{text}".encode(), usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class Candidates:
    """The two legs of a hybrid search, each ranked best first as (memory id, score): the lexical score is
    the engine's own, the semantic one is always the cosine between query and memory vectors, whatever the
    engine reports (the relevance judge and the near-duplicate threshold read it as a cosine)."""

    lexical: tuple[tuple[str, float], ...]
    semantic: tuple[tuple[str, float], ...]
    degraded: str | None = None  # set when one leg could not run, saying why


@dataclass(frozen=True, slots=True)
class RecallHit:
    memory: Memory
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    via: str = "search"  # search | graph
    # how sure recall is that this hit bears on the query, 0..1; hits under the floor (0.5) are withheld
    relevance: float = 1.0


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: tuple[RecallHit, ...]
    degraded: str | None = None
    # set when candidates were found but none cleared the relevance floor: "nothing relevant", not an error
    nothing_relevant: bool = False


_WS = re.compile(r"\s+")


def content_hash(kind: MemoryKind | str, content: str) -> str:
    """Exact-dedup key: kind plus content with case, Unicode form and whitespace folded."""
    norm = _WS.sub(" ", unicodedata.normalize("NFKC", content)).strip().casefold()
    return hashlib.sha256(f"{kind}\x1f{norm}".encode()).hexdigest()

"""Stage inputs and outputs: pydantic, they cross Step Functions as JSON, so they stay small (keys, not data).

Also the documents stages keep in the blob store: serialised events, chunks, and memory candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cairn.domain.codec import dt_in
from cairn.domain.models import MemoryKind, Session
from cairn.project_files import ProjectFile
from cairn.transcripts.model import Role, TranscriptEvent

MAX_CANDIDATE_CHARS = 2_000


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionRef(Edge):
    """Every stage starts from this: which session of which team (project and agent come from the session)."""

    team_id: str = Field(min_length=1, max_length=64)
    session_id: str = Field(min_length=1, max_length=128)
    force: bool = False  # reprocess: ignore earlier stage outputs

    def ref(self) -> dict[str, Any]:
        """Just the session reference of a stage's input, for the next stage's input or result."""
        return {"team_id": self.team_id, "session_id": self.session_id, "force": self.force}


class ParseResult(SessionRef):
    events_key: str
    parts: int
    events: int


class ChunkResult(SessionRef):
    events_key: str
    chunk_keys: list[str]


class ExtractInput(SessionRef):
    chunk_key: str


class ExtractResult(SessionRef):
    chunk_key: str
    candidates_key: str
    candidates: int
    extractor: str
    queued_for_llm: bool = False


class ConsolidateResult(SessionRef):
    events_key: str
    output_key: str
    created: int = 0
    merged: int = 0
    superseded: int = 0
    relations: int = 0
    promoted: int = 0
    excerpts: int = 0  # transcript excerpts the session now holds
    excerpt_chars: int = 0
    procedures: int = 0  # mined from its commands (the reflect stage reports it)
    retrusted: int = 0  # memories whose reads were of the project's other checkouts (`remembering.folders`)


class ReflectResult(SessionRef):
    output_key: str
    reflection_id: str | None = None
    handoff_id: str | None = None
    procedures: int = 0


# --- documents kept in the blob store ---------------------------------------------------------
class EventDoc(BaseModel):
    seq: int
    line_no: int
    role: Role
    text: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] | str | None = None
    tool_call_id: str | None = None
    is_error: bool = False
    timestamp: str | None = None
    is_sidechain: bool = False
    line_end: int | None = None
    is_plan: bool = False  # an approved plan the agent wrote (`TranscriptEvent.is_plan`)
    steers: bool = False  # the person's words within the request under way (`TranscriptEvent.steers`)

    @classmethod
    def of(cls, e: TranscriptEvent) -> EventDoc:
        tool_input = (
            e.tool_input if isinstance(e.tool_input, str) or e.tool_input is None else dict(e.tool_input)
        )
        return cls(
            seq=e.seq,
            line_no=e.line_no,
            role=e.role,
            text=e.text,
            tool_name=e.tool_name,
            tool_input=tool_input,
            tool_call_id=e.tool_call_id,
            is_error=e.is_error,
            timestamp=e.timestamp,
            is_sidechain=e.is_sidechain,
            line_end=e.line_end,
            is_plan=e.is_plan,
            steers=e.steers,
        )

    @property
    def last_line(self) -> int:
        return self.line_end if self.line_end is not None else self.line_no


class PartSpan(BaseModel):
    key: str
    first_line: int  # 1-based line of the concatenated transcript where this part starts
    lines: int


class EventsDoc(BaseModel):
    """The parse stage's output: the normalised events of every part received so far."""

    agent: str
    session_id: str | None = None
    cwd: str | None = None
    git_remote: str | None = None
    git_branch: str | None = None
    branches: list[tuple[int, str]] = Field(default_factory=list)  # (line, branch) at each change
    parts: list[PartSpan]
    stats: dict[str, Any] = Field(default_factory=dict)
    events: list[EventDoc]
    project_files: list[ProjectFile] = Field(default_factory=list)  # manifests the capture hook sent
    # a sub-agent's tool calls its progress records keep, with only where they wrote (`ParsedTranscript`)
    subagent_calls: list[EventDoc] = Field(default_factory=list)

    def switched_branch(self, line: int | None) -> str | None:
        """The branch the session had moved to by this line, when it is not the one the session began
        on: what was learned after `git checkout -b feature` is that branch's, maybe never merged."""
        if line is None or len(self.branches) < 2:
            return None
        now = next((b for at, b in reversed(self.branches) if at <= line), None)
        return now if now != self.branches[0][1] else None


class ChunkDoc(BaseModel):
    chunk_id: str
    index: int
    line_start: int
    line_end: int
    events: list[EventDoc]


class CandidateLink(BaseModel):
    predicate: str
    target_ref: str


class Candidate(BaseModel):
    """A memory an extractor proposes; consolidation decides whether it becomes new, merges or supersedes."""

    model_config = ConfigDict(extra="forbid")

    kind: MemoryKind
    content: str = Field(min_length=3, max_length=MAX_CANDIDATE_CHARS)
    title: str | None = Field(default=None, max_length=300)
    tags: list[str] = Field(default_factory=list, max_length=16)
    confidence: float = Field(default=0.5, ge=0, le=1)
    details: dict[str, Any] = Field(default_factory=dict)
    line_start: int | None = None
    line_end: int | None = None
    ref: str | None = None  # a name other candidates of the same chunk can link to
    links: list[CandidateLink] = Field(default_factory=list)


class CandidatesDoc(BaseModel):
    chunk_id: str
    extractor: str
    candidates: list[Candidate]


def taught_at(events: Sequence[EventDoc], session: Session) -> datetime | None:
    """When a session said what it taught (`Memory.valid_from`): its transcript's last dated event, where
    the work stood at its end whenever it was uploaded or learned (of two sessions that overlapped, the
    one that went on longer); else when the session ran as Cairn knows it (`Session.ran_at`)."""
    for e in reversed(events):
        if (when := _time(e.timestamp)) is not None:
            return when
    return session.ran_at


def _time(stamp: str | None) -> datetime | None:
    """An event's ISO-8601 time as agents write it (`Z` or an offset; none is UTC), or None."""
    try:
        return dt_in(stamp.strip()) if stamp else None
    except ValueError:
        return None

"""Arguments of the MCP tools: pydantic models that refuse unknown fields and become the tools' schemas.

The field descriptions are what the model reads when it decides how to call a tool, so they say what
a value means in Cairn's terms, not just its type.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from cairn.api.schemas import MAX_QUERY_CHARS, ProjectKey, Strict, Tag, _details_size
from cairn.domain.errors import InvalidInput
from cairn.domain.models import MemoryKind, Scope
from cairn.services import digest as dg
from cairn.services.context import DEFAULT_BUDGET, MAX_BUDGET, MAX_PROMPT_CHARS, MIN_BUDGET
from cairn.services.feedback import Signal
from cairn.services.memories import MAX_CONTENT_CHARS, PREDICATES
from cairn.services.procedures import Outcome

MemoryId = Annotated[str, Field(min_length=1, max_length=64, description="A memory id (mem_...).")]
Project = Annotated[
    ProjectKey,
    Field(description="Project key: the normalised git remote URL, or the repo folder name."),
]
Content = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS)]
Line = Annotated[str, Field(min_length=1, max_length=2_000)]
Predicate = Literal[tuple(sorted(PREDICATES))]  # type: ignore[valid-type]
Details = Annotated[
    dict[str, Any], Field(description="Kind-specific fields, e.g. procedure steps, decision rationale.")
]


class _Args(Strict):
    _details = field_validator("details", check_fields=False)(_details_size)


class RememberArgs(_Args):
    content: Content = Field(
        description="One self-contained statement worth remembering, written for a future reader."
    )
    kind: MemoryKind = Field(
        default=MemoryKind.FACT,
        description="What it is. Procedures keep `steps` in details; decisions `rationale` and "
        "`alternatives`; episodes `outcome`.",
    )
    project: Project | None = None
    scope: Scope = Field(
        default=Scope.PROJECT,
        description="project (default; needs `project`), team (all its projects) or personal (you only).",
    )
    title: str | None = Field(default=None, max_length=300, description="A short headline.")
    tags: list[Tag] = Field(default_factory=list, max_length=32)
    pinned: bool = Field(default=False, description="Pinned memories rank higher in recall and context.")
    confidence: float = Field(default=0.5, ge=0, le=1, description="How sure you are, 0..1.")
    details: Details = Field(default_factory=dict)
    session_id: str | None = Field(
        default=None, max_length=200, description="The agent session this came from."
    )
    agent: str | None = Field(
        default=None, max_length=64, description="The agent writing it, e.g. claude-code."
    )


class RecallArgs(Strict):
    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="What you are looking for, in words."
    )
    project: Project | None = None
    kinds: list[MemoryKind] | None = Field(default=None, description="Only these kinds.")
    tags: list[Tag] | None = Field(default=None, description="Only memories with at least one of these tags.")
    include_team: bool = Field(default=True, description="With a project, also search team-global memories.")
    limit: int = Field(default=8, ge=1, le=50)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be empty")
        return value


class IdArgs(Strict):
    id: MemoryId


class UpdateArgs(_Args):
    id: MemoryId
    content: Content | None = None
    title: str | None = Field(default=None, max_length=300)
    tags: list[Tag] | None = Field(default=None, max_length=32, description="Replaces the tags.")
    pinned: bool | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    details: Details | None = Field(default=None, description="Replaces the details object.")


class SupersedeArgs(_Args):
    id: MemoryId = Field(description="The memory that is wrong or outdated.")
    content: Content = Field(description="The corrected memory.")
    kind: MemoryKind | None = Field(default=None, description="Defaults to the old memory's kind.")
    title: str | None = Field(default=None, max_length=300)
    tags: list[Tag] | None = Field(
        default=None, max_length=32, description="Defaults to the old memory's tags."
    )
    details: Details | None = Field(default=None, description="Defaults to the old memory's details.")
    reason: str | None = Field(
        default=None, max_length=2_000, description="Why the old memory no longer holds."
    )


class RelateArgs(Strict):
    source_id: MemoryId
    predicate: Predicate = Field(description="How source relates to target.")  # type: ignore[valid-type]
    target_id: MemoryId
    weight: float = Field(default=1.0, ge=0, le=10)


class UnrelateArgs(Strict):
    relation_id: str = Field(min_length=1, max_length=64, description="A relation id (rel_...).")


class GraphArgs(Strict):
    id: MemoryId = Field(description="The memory to start from.")
    depth: int = Field(default=1, ge=1, le=3, description="How many relation hops to follow.")
    direction: Literal["in", "out", "both"] = "both"
    max_nodes: int = Field(default=30, ge=1, le=100)


class ProjectListArgs(Strict):
    project: Project | None = None
    limit: int = Field(default=20, ge=1, le=100)


class ReflectionsArgs(ProjectListArgs):
    session_id: str | None = Field(
        default=None, max_length=200, description="Only this session's reflection."
    )


class OutcomeArgs(Strict):
    id: MemoryId = Field(description="The procedure that was followed.")
    outcome: Outcome = Field(description="success or failure.")


class SessionsArgs(Strict):
    project: Project | None = None
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=500, description="next_cursor of a previous page.")


class TranscriptArgs(Strict):
    session_id: str = Field(min_length=1, max_length=200)
    line_start: int = Field(
        ge=1, le=10_000_000, description="First line, as a recall excerpt's `lines` give it."
    )
    line_end: int | None = Field(default=None, ge=1, le=10_000_000)
    around: int = Field(default=0, ge=0, le=100, description="Extra lines on each side.")


class TimelineArgs(Strict):
    session_id: str = Field(min_length=1, max_length=200)
    limit: int = Field(default=100, ge=1, le=500)


class HandoffSaveArgs(Strict):
    project: Project
    summary: Content = Field(description="Where things stand: what was done and what is in flight.")
    agent: str | None = Field(
        default=None, max_length=64, description="Whose handoff this is, e.g. claude-code."
    )
    next_steps: list[Line] = Field(default_factory=list, max_length=50)
    open_questions: list[Line] = Field(default_factory=list, max_length=50)
    errors: list[Line] = Field(default_factory=list, max_length=50, description="Errors still unresolved.")
    session_id: str | None = Field(default=None, max_length=200)


class HandoffGetArgs(Strict):
    project: Project
    agent: str | None = Field(default=None, max_length=64)
    consume: bool = Field(
        default=True, description="Mark it read so it is handed over once; false only peeks."
    )


class CheckpointSaveArgs(Strict):
    project: Project
    name: str = Field(min_length=1, max_length=100, description="A name to restore it by.")
    content: Content = Field(description="The state to come back to.")
    agent: str | None = Field(default=None, max_length=64)
    next_steps: list[Line] = Field(default_factory=list, max_length=50)
    session_id: str | None = Field(default=None, max_length=200)


class CheckpointListArgs(Strict):
    project: Project
    limit: int = Field(default=20, ge=1, le=100)


class CheckpointRestoreArgs(Strict):
    id: MemoryId | None = None
    project: Project | None = None
    name: str | None = Field(
        default=None, min_length=1, max_length=100, description="With project, instead of id."
    )


class ContextArgs(Strict):
    project: Project
    agent: str = Field(
        default="generic", max_length=64, description="The agent asking, e.g. claude-code, codex."
    )
    budget_tokens: int = Field(default=DEFAULT_BUDGET, ge=MIN_BUDGET, le=MAX_BUDGET)
    prompt: str | None = Field(
        default=None, max_length=MAX_PROMPT_CHARS, description="The task at hand, to rank what is relevant."
    )


class DigestArgs(Strict):
    project: Project
    sessions: int | None = Field(
        default=None,
        ge=1,
        le=dg.MAX_SESSIONS,
        description=f"The last N sessions (default {dg.DEFAULT_SESSIONS}). Give this or `since`, not both.",
    )
    since: str | None = Field(
        default=None,
        max_length=40,
        description="Sessions from this ISO date or date-time on, e.g. 2026-11-01.",
    )
    budget_tokens: int = Field(default=dg.DEFAULT_BUDGET, ge=dg.MIN_BUDGET, le=dg.MAX_BUDGET)

    @field_validator("since")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        try:
            dg.parse_since(value)
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _one_window(self) -> DigestArgs:
        if self.sessions is not None and self.since is not None:
            raise ValueError("give either sessions or since, not both")
        return self


class FeedbackArgs(Strict):
    id: MemoryId
    signal: Signal = Field(
        description="useful (raise confidence), wrong (lower it), stale (lower it strongly)."
    )
    note: str | None = Field(default=None, max_length=1_000)

"""The one builder of a new memory from a request's fields, for REST, MCP and the web UI."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cairn.domain.models import Memory, MemoryKind, Provenance, Scope
from cairn.services.memories import NewMemory, new_memory

pytestmark = pytest.mark.unit

OLD = Memory(
    id="mem_old",
    team_id="team_a",
    kind=MemoryKind.PROCEDURE,
    content="Run the tests with make test",
    scope=Scope.PROJECT,
    project="shop",
    title="Testing",
    tags=("testing",),
    pinned=True,
    confidence=0.4,
    details={"steps": ["make test"]},
    provenance=Provenance(session_id="ses_1", transcript_key="k", line_start=3, line_end=9, agent="codex"),
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
)


def test_a_request_without_optional_fields_gets_the_defaults():
    new = new_memory({"kind": MemoryKind.FACT, "content": "Port 8080", "project": "shop", "title": None})
    assert new == NewMemory(MemoryKind.FACT, "Port 8080", project="shop")


def test_provenance_comes_from_a_mapping_or_from_session_and_agent():
    given = {"session_id": "ses_9", "line_start": 1, "line_end": 2}
    rest = new_memory({"kind": MemoryKind.FACT, "content": "x", "provenance": given, "tags": ["a"]})
    mcp = new_memory({"kind": MemoryKind.FACT, "content": "x", "session_id": "ses_9", "agent": "codex"})
    assert rest.provenance == Provenance(session_id="ses_9", line_start=1, line_end=2)
    assert rest.tags == ("a",)
    assert mcp.provenance == Provenance(session_id="ses_9", agent="codex")


def test_a_correction_keeps_what_the_request_leaves_out_but_not_the_old_lines():
    new = new_memory({"content": "Run the tests with make check", "title": None, "tags": None}, OLD)
    assert (new.kind, new.scope, new.project, new.title, new.tags) == (
        MemoryKind.PROCEDURE, Scope.PROJECT, "shop", "Testing", ("testing",)
    )  # fmt: skip
    assert (new.pinned, new.confidence, dict(new.details)) == (True, 0.4, {"steps": ["make test"]})
    assert new.provenance == Provenance(session_id="ses_1", transcript_key="k", agent="codex")


def test_a_correction_takes_what_the_request_gives_and_keeps_its_reason_in_details():
    fields = {
        "content": "y",
        "kind": MemoryKind.FACT,
        "tags": [],
        "details": {},
        "reason": "moved",
        "confidence": 0.5,
    }
    new = new_memory(fields, OLD)
    assert (new.kind, new.tags, dict(new.details), new.confidence) == (
        MemoryKind.FACT, (), {"supersede_reason": "moved"}, 0.5
    )  # fmt: skip

"""The session-start block of a project of several sessions (ContextService over real SQLite): work left
on a side branch, and a reported outcome said once."""

from __future__ import annotations

import time

import pytest
from cairn.domain.models import MemoryKind, Provenance
from cairn.services.handoffs import HandoffNote, HandoffService

from tests.integration.test_context_assembly import ALICE, P, Store

pytestmark = pytest.mark.integration


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "cairn.db")
    yield s
    s.db.close()


def _session(store: Store, sid: str, *memories: tuple[MemoryKind, str, dict]) -> None:
    for kind, content, extra in memories:
        store.add(kind=kind, content=content, provenance=Provenance(session_id=sid), **extra)
    time.sleep(0.01)  # the project's own order of sessions is when their memories were made


def git(branch: str, commit: str) -> tuple[MemoryKind, str, dict]:
    text = f"Git activity of this session: commits on `{branch}`: `{commit}` work"
    return MemoryKind.EPISODE, text, {"title": "Git activity: 1 commit(s)", "tags": ("git",)}


def reported(text: str) -> tuple[MemoryKind, str, dict]:
    return MemoryKind.FACT, text, {"tags": ("reported",), "details": {"changed": True, "values": ["x"]}}


def test_a_change_made_on_a_branch_the_project_went_on_without_is_not_shown_as_current(store):
    # an Elixir project: one session tried another mailer on a branch; the sessions after it stayed on main
    _session(store, "s1", git("main", "a1"), reported("Mailer is `Swoosh.Adapters.SMTP` on port `2525` now"))
    _session(store, "s2", git("try-bamboo", "b2"), reported("Switched the mailer to `Bamboo` (was `Swoosh`)"))
    _session(store, "s3", git("main", "c3"), reported("The `mix test` suite now runs in 40 s (was 90 s)"))

    md = store.context.assemble(ALICE, P, "codex").markdown

    assert "Switched the mailer to `Bamboo`" not in md
    assert "`Swoosh.Adapters.SMTP`" in md and "40 s (was 90 s)" in md
    # where that work lives is still said: the branch is open work
    assert "try-bamboo" in md.split("## Recent work")[1].split("##")[0]


def test_an_outcome_the_handoff_reports_is_not_a_fact_line_as_well(store):
    said = '"Every device_id MUST be a clickable map link: `[id](https://maps.example.org/?id=ID)`"'
    _session(store, "s1", reported("The API listens on `:8080` now"))
    _session(store, "s2", reported(said + "*"))
    HandoffService(store.memories).save_handoff(
        ALICE,
        HandoffNote(P, "Last request: link the devices", "claude-code", session_id="s2", reported=(said,)),
    )

    md = store.context.assemble(ALICE, P, "claude-code").markdown

    assert md.count("Every device_id MUST") == 1

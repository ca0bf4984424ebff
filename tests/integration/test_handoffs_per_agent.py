"""Each agent of a project gets its own handoff, whatever order sessions are learned in, and two session
starts at the same moment never both receive one handoff (SQLite here; the conditional write behind it is
in tests/contract for every adapter)."""

from __future__ import annotations

import threading

import pytest
from cairn.services.handoffs import HandoffNote, HandoffService

from tests.integration.pipeline_helpers import claude_transcript, codex_rollout, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/shop"
PROMPT = "Add the refund endpoint to the payments service next."


@pytest.fixture
def services(container, team_a):
    caller = container.keys.authenticate(team_a.admin)
    return caller, HandoffService(container.memories), container.context


def _learn(container, api, team_a, agent: str) -> dict:
    sid = f"{agent}-session"
    raw = (
        claude_transcript(sid, [("user", PROMPT)])
        if agent == "claude-code"
        else codex_rollout(sid, "/home/dev/shop", [("user", PROMPT)])
    )
    session = learn(container, api, team_a.headers, raw=raw, session_id=sid, project=PROJECT, agent=agent)
    assert session["status"] == "learned", session["stats"]
    return session


@pytest.mark.parametrize("order", [("claude-code", "codex"), ("codex", "claude-code")], ids="-then-".join)
def test_sessions_of_two_agents_each_leave_their_own_handoff_in_either_order(
    order, container, api, team_a, services
):
    caller, handoffs, context = services
    sessions = {agent: _learn(container, api, team_a, agent) for agent in order}
    ids = {agent: s["stats"]["reflect"]["handoff_id"] for agent, s in sessions.items()}
    assert ids["codex"] != ids["claude-code"]

    for agent in order:
        assembled = context.assemble(caller, PROJECT, agent)
        assert assembled.handoff_id == ids[agent], agent
        assert "refund endpoint" in assembled.markdown
    assert handoffs.take_handoff(caller, PROJECT, "codex") is None  # each was handed over once


def test_the_same_words_saved_for_two_agents_are_two_handoffs(services):
    caller, handoffs, _ = services
    first = handoffs.save_handoff(caller, HandoffNote(PROJECT, "Ship the refund flag", agent="codex"))
    second = handoffs.save_handoff(caller, HandoffNote(PROJECT, "Ship the refund flag", agent="claude-code"))

    assert first.id != second.id
    assert handoffs.take_handoff(caller, PROJECT, "claude-code").id == second.id
    assert handoffs.take_handoff(caller, PROJECT, "codex").id == first.id


def _race(starts: int, start_session) -> list:
    barrier = threading.Barrier(starts)
    results: list = []

    def run() -> None:
        barrier.wait()
        results.append(start_session())

    threads = [threading.Thread(target=run) for _ in range(starts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_concurrent_session_starts_never_both_receive_one_handoff(services):
    caller, handoffs, context = services
    for round_no in range(3):
        saved = handoffs.save_handoff(
            caller, HandoffNote(PROJECT, f"Resume the migration, step {round_no}", agent="claude-code")
        )
        results = _race(4, lambda: context.assemble(caller, PROJECT, "claude-code"))

        receivers = [r for r in results if r.handoff_id == saved.id]
        assert len(receivers) == 1, round_no
        losers = [r for r in results if r.handoff_id is None]
        assert len(losers) == 3
        assert all(f"step {round_no}" not in r.markdown for r in losers)


def test_concurrent_mcp_takes_hand_a_handoff_to_one_caller(services):
    caller, handoffs, _ = services
    saved = handoffs.save_handoff(caller, HandoffNote(PROJECT, "Rotate the staging keys", agent="codex"))

    results = _race(4, lambda: handoffs.take_handoff(caller, PROJECT, "codex"))

    assert [r.id for r in results if r is not None] == [saved.id]

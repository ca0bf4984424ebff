"""Handoffs are handed over once whichever path reads them (session-start context or MCP), and
checkpoints are never handed over as "where you left off"."""

import pytest
from cairn.services.handoffs import CheckpointNote, HandoffNote, HandoffService

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"


@pytest.fixture
def services(container, team_a):
    caller = container.keys.authenticate(team_a.admin)
    return caller, HandoffService(container.memories), container.context


def test_a_handoff_taken_through_mcp_is_not_delivered_again_at_session_start(services):
    caller, handoffs, context = services
    saved = handoffs.save_handoff(
        caller, HandoffNote(PROJECT, "Finish the refund endpoint", agent="claude-code")
    )
    assert handoffs.take_handoff(caller, PROJECT, "claude-code").id == saved.id
    assembled = context.assemble(caller, PROJECT, "claude-code")
    assert assembled.handoff_id is None and "Finish the refund endpoint" not in assembled.markdown


def test_a_handoff_delivered_at_session_start_is_not_taken_again_through_mcp(services):
    caller, handoffs, context = services
    saved = handoffs.save_handoff(
        caller, HandoffNote(PROJECT, "Rotate the staging keys", agent="claude-code")
    )
    assert context.assemble(caller, PROJECT, "claude-code").handoff_id == saved.id
    assert handoffs.take_handoff(caller, PROJECT, "claude-code") is None


def test_a_checkpoint_is_never_handed_over_as_where_you_left_off(services):
    caller, handoffs, context = services
    cp = handoffs.save_checkpoint(caller, CheckpointNote(PROJECT, "before-migration", "Schema v3 applied"))
    assembled = context.assemble(caller, PROJECT, "claude-code")
    assert assembled.handoff_id is None
    assert handoffs.restore_checkpoint(caller, PROJECT, name="before-migration").id == cp.id

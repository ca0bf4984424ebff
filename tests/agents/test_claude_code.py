"""Claude Code 2.1.197 run headless (`claude -p`), wired to a real Cairn by `cairn install-hooks`."""

from __future__ import annotations

import pytest

from tests.agents.conftest import (
    DECISION,
    LEARNED,
    PREFERENCE,
    SEEDED_FACT,
    SESSION_START_HEADER,
    prompt_blocks,
    scenario,
    teardown,
    text_of,
)

AGENT = "claude-code"
pytestmark = pytest.mark.agents


def configure(world) -> None:
    world.env.update(
        ANTHROPIC_BASE_URL=world.models.url,
        ANTHROPIC_API_KEY="sk-ant-test-fake",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
    )


def run_session(world, prompt: str) -> None:
    proc = world.run(world.binary, "-p", prompt, "--allowedTools", "mcp__cairn__recall", timeout=180)
    assert proc.returncode == 0, world.diagnostics()


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    out = scenario(AGENT, tmp_path_factory.mktemp("claude"), configure, run_session, list_mcp)
    yield out
    teardown(out)


def test_the_session_start_context_reaches_the_model(story):
    sent = text_of(story.first)
    assert SESSION_START_HEADER in sent and SEEDED_FACT in sent, story.world.diagnostics()


def test_the_prompt_hook_adds_the_learned_memory_that_bears_on_the_prompt(story):
    assert any(LEARNED in block for block in prompt_blocks(story.second)), story.world.diagnostics()


def test_a_preference_and_a_decision_typed_in_one_session_reach_the_next_sessions_context(story):
    assert PREFERENCE.rstrip(".") in " ".join(story.world.memories("preference"))
    assert DECISION.rstrip(".") in " ".join(story.world.memories("decision"))
    sent = text_of(story.second)
    assert SESSION_START_HEADER in sent
    assert PREFERENCE.rstrip(".") in sent and DECISION.rstrip(".") in sent, story.world.diagnostics()


def test_the_model_can_call_cairns_recall_tool_and_gets_the_learned_decision_back(story):
    calls = [r.reply.tool for r in story.second if r.reply and r.reply.tool]
    assert calls == ["mcp__cairn__recall"]
    results = [r.tool_output for r in story.second if r.tool_output]
    assert results and LEARNED in results[0], story.world.diagnostics()


def test_cairns_mcp_server_is_listed_as_connected(story):
    out = story.mcp_list.stdout
    line = next((ln for ln in out.splitlines() if ln.startswith("cairn")), "")
    assert "Connected" in line, out + story.mcp_list.stderr


def test_installing_twice_changes_no_file(story):
    assert story.before_reinstall and story.before_reinstall == story.after_reinstall
    assert all(line.startswith("unchanged") for line in story.reinstall_report), story.reinstall_report

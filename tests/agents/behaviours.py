"""What every agent must do with Cairn wired in, as tests over the module's `story` (see conftest.scenario).

Each agent module star-imports these, so the same sentences run once per agent; a module's `XFAIL` names
the ones its agent cannot pass yet, with the reason.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from tests.agents.conftest import (
    ANSWER,
    DECISION,
    LEARNED,
    PREFERENCE,
    PROJECT,
    SEEDED_FACT,
    SESSION_START_HEADER,
    prompt_blocks,
    start_cairn,
    stop_cairn,
    text_of,
)

pytestmark = pytest.mark.agents


def test_both_headless_sessions_finish_without_error(story):
    assert [p.returncode for p in story.runs] == [0, 0], story.world.diagnostics()
    assert story.first and story.second, "the CLI never called the fake model"


def test_the_session_start_context_reaches_the_model(story):
    sent = text_of(story.first)
    assert SESSION_START_HEADER in sent and SEEDED_FACT in sent, story.world.diagnostics()


def test_the_session_is_uploaded_and_learned(story):
    statuses = [s["status"] for s in story.learned]
    assert "learned" in statuses, f"{story.learned}\n{story.world.diagnostics()}"
    assert PREFERENCE.rstrip(".") in " ".join(story.world.memories("preference"))
    assert DECISION.rstrip(".") in " ".join(story.world.memories("decision"))


def test_a_preference_and_a_decision_typed_in_one_session_reach_the_next_sessions_context(story):
    sent = text_of(story.second)
    assert SESSION_START_HEADER in sent, story.world.diagnostics()
    assert PREFERENCE.rstrip(".") in sent and DECISION.rstrip(".") in sent, story.world.diagnostics()


def test_the_prompt_hook_adds_the_learned_memory_that_bears_on_the_prompt(story):
    assert any(LEARNED in block for block in prompt_blocks(story.second)), story.world.diagnostics()


def test_a_prompt_of_several_parts_gets_the_memory_that_answers_one_of_them(story):
    # the first prompt states a preference, records a decision and asks a question a seeded memory answers
    assert any(ANSWER in block for block in prompt_blocks(story.first)), story.world.diagnostics()


def test_the_model_can_call_cairns_recall_tool_and_gets_the_learned_decision_back(story):
    calls = [r.reply.tool for r in story.second if r.reply and r.reply.tool]
    assert calls == [story.spec.recall_tool], f"tools offered: {_offered(story)}"
    results = [r.tool_output for r in story.second if r.tool_output]
    assert results and LEARNED in results[0], story.world.diagnostics()


def test_cairns_mcp_server_is_listed_by_the_cli(story):
    out = story.mcp_list.stdout + story.mcp_list.stderr
    assert story.spec.mcp_listed(out), out


def test_installing_twice_changes_no_file(story):
    assert story.before_reinstall and story.before_reinstall == story.after_reinstall
    assert all(line.startswith("unchanged") for line in story.reinstall_report), story.reinstall_report


def test_cairn_backfill_finds_the_sessions_the_cli_made_and_learns_them_on_a_server_that_had_none(
    story, tmp_path
):
    world = story.world
    listing = world.cairn("backfill", "--dry-run", "--json", "--agent", world.agent)
    assert listing.returncode == 0, listing.stderr
    found = {s["session_id"] for s in json.loads(listing.stdout)["sessions"]}
    hooked = {s["id"] for s in world.sessions() if s["agent"] == world.agent}
    assert hooked and hooked <= found, f"found {found}, the hooks sent {hooked}"

    fresh = replace(world, cairn_home=tmp_path / "cairn", server=None, url="", key="", logs=[])
    fresh.cairn_home.mkdir()
    fresh.env = {**world.env, "CAIRN_HOME": str(fresh.cairn_home)}
    start_cairn(fresh)
    try:
        env = {**fresh.env, "CAIRN_URL": fresh.url, "CAIRN_API_KEY": fresh.key}
        run = world.run(sys.executable, "-m", "cairn.cli.main", "backfill", "--agent", world.agent, env=env)
        assert run.returncode == 0, run.stdout + run.stderr
        learned = fresh.api("GET", "/v1/sessions", params={"project": PROJECT})["items"]
        assert {s["id"] for s in learned} == found, run.stdout
        assert {s["status"] for s in learned} == {"learned"}, run.stdout
    finally:
        stop_cairn(fresh)


def _offered(story) -> list[str]:
    from tests.fakes.models import anthropic, chat, gemini, responses

    modules = {m.NAME: m for m in (anthropic, chat, gemini, responses)}
    first = story.second[0] if story.second else None
    if first is None or not isinstance(first.body, dict):
        return []
    return list(modules[first.provider].read_turn(first.path, first.body).tools)

"""The learning pipeline on a real Claude Code session (claude-code-viewer fixture), through the real API.

What the session did (read from the transcript): an orchestrator split "create TODO app by Next.js" into
sub-agents; one scaffolded the app with create-next-app (next 15.5.2, react 19.1.0) and `pnpm add
lucide-react`, ran `pnpm dev --port 3001` (served at http://localhost:3001); another hit TS2307 "Cannot
find module '@testing-library/react'" in `npx tsc --noEmit --skipLibCheck`, edited useTodos.test.ts and
re-ran it successfully; the last one ran `npm run build` four times, always failing with "TypeError:
generate is not a function". The main thread ended with "Please update CLAUDE.md for current changes".
"""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SESSION = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
PROJECT = "github.com/demo/todo-app"
TSC = "cd /path/to/Demo/todo-app && npx tsc --noEmit --skipLibCheck"
TSC_SHOWN = "npx tsc --noEmit --skipLibCheck"  # without the `cd` into the session's own checkout


@pytest.fixture
def learned(container, api, team_a):
    session = learn(
        container, api, team_a.headers, raw=CLAUDE_FIXTURE.read_bytes(), session_id=SESSION, project=PROJECT
    )
    return session, memories_of(api, team_a.headers, PROJECT)


def _find(memories, kind, *needles):
    return [m for m in memories if m["kind"] == kind and all(n in m["content"] for n in needles)]


def test_the_session_is_learned_with_counts_per_stage(learned):
    session, _ = learned
    assert session["status"] == "learned", session["stats"]
    stats = session["stats"]
    assert stats["parse"]["events"] > 400
    assert stats["chunk"]["chunks"] >= 10
    assert stats["consolidate"]["created"] >= 8
    assert stats["extract"]["extractors"] == ["rules"]


def test_the_typescript_error_and_its_fix_are_remembered_and_linked(learned, api, team_a):
    _, memories = learned
    [episode] = _find(memories, "episode", "TS2307", "@testing-library/react", TSC_SHOWN)
    assert episode["details"]["outcome"] == "fixed" and episode["details"]["command"] == TSC
    [fix] = _find(memories, "procedure", "useTodos.test.ts", "TS2307")
    assert fix["details"]["steps"][-1] == TSC_SHOWN and TSC not in fix["content"]
    rels = api.get(f"/v1/memories/{fix['id']}/relations", headers=team_a.headers, params={"direction": "out"})
    assert any(r["predicate"] == "fixes" and r["target_id"] == episode["id"] for r in rels.json()["items"])
    # provenance points into the stored transcript part, at the failing call
    assert episode["provenance"]["session_id"] == SESSION
    assert episode["provenance"]["transcript_key"].endswith("/transcript-1.jsonl.gz")
    assert episode["provenance"]["line_start"] == 277


def test_commands_that_worked_become_procedures_with_counts(learned):
    _, memories = learned
    [tsc] = [
        m
        for m in memories
        if m["kind"] == "procedure"
        and m["details"].get("command") == TSC
        and "steps" in m["details"]
        and "fixes_error" not in m["details"]
    ]
    assert (tsc["details"]["success_count"], tsc["details"]["failure_count"]) == (1, 1)
    assert _find(memories, "procedure", "`pnpm dev --port 3001`")


def test_facts_confirmed_by_tools_are_remembered(learned):
    _, memories = learned
    assert _find(memories, "fact", "http://localhost:3001", "pnpm dev --port 3001")
    # one fact of what the session installed, though three commands installed it
    [versions] = _find(memories, "fact", "Installed versions:")
    assert versions["content"].startswith("Installed versions: create-next-app@15.5.2, next@15.5.2")
    assert versions["content"].endswith(", lucide-react@0.542.0")
    assert versions["details"]["versions"]["next"] == "15.5.2"


def test_the_unresolved_build_error_reaches_the_handoff(learned):
    _, memories = learned
    [unresolved] = _find(memories, "episode", "npm run build", "generate is not a function")
    assert unresolved["details"]["outcome"] == "unresolved"
    assert unresolved["details"]["attempts"] == 4
    [handoff] = [m for m in memories if m["kind"] == "handoff"]
    assert "Please update CLAUDE.md for current changes" in handoff["content"]
    assert any("npm run build" in e for e in handoff["details"]["errors"])
    [reflection] = [m for m in memories if m["kind"] == "reflection"]
    assert "Still failing: `npm run build`" in reflection["content"]


def test_nothing_restates_prompts_tool_noise_or_assistant_prose(learned):
    _, memories = learned
    banned = (
        "Todos have been modified",
        "File has not been read yet",
        "<system-reminder>",
        "tool_use_error",
        "Create React components",
        "I'll help you",
        "Next.js 14",
        "`ls ",
    )
    # transcript excerpts quote the session on purpose; extracted memories must not
    for m in memories:
        if m["kind"] != "excerpt":
            assert not any(b in m["content"] for b in banned), m["content"]
    # no preference or decision: the user stated none in this session
    assert not [m for m in memories if m["kind"] in ("preference", "decision")]


def test_learning_the_same_session_twice_creates_no_duplicates(learned, container, api, team_a):
    _, before = learned
    container.runner.run(team_a.team_id, SESSION, force=True)
    after = memories_of(api, team_a.headers, PROJECT)
    assert sorted(m["id"] for m in after) == sorted(m["id"] for m in before)
    assert [m["confidence"] for m in sorted(after, key=lambda m: m["id"])] == [
        m["confidence"] for m in sorted(before, key=lambda m: m["id"])
    ]

"""Consolidation across sessions: reversed decisions supersede, near duplicates merge, team-wide promotion."""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import claude_transcript, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/shop"


def _say(container, api, team, session_id, text, project=PROJECT):
    raw = claude_transcript(session_id, [("user", text), ("assistant", [{"type": "text", "text": "Noted."}])])
    session = learn(container, api, team.headers, raw=raw, session_id=session_id, project=project)
    assert session["status"] == "learned", session["stats"]
    return session


def test_a_later_session_that_reverses_a_decision_supersedes_it_and_both_stay_in_history(
    container, api, team_a
):
    _say(
        container, api, team_a, "s-first", "Let's go with PostgreSQL for the database because we need JSONB."
    )
    [first] = memories_of(api, team_a.headers, PROJECT, kind="decision")
    assert first["details"]["rationale"] == "we need JSONB"

    _say(
        container,
        api,
        team_a,
        "s-later",
        "We decided to switch from PostgreSQL to SQLite to keep setup simple.",
    )
    [current] = memories_of(api, team_a.headers, PROJECT, kind="decision")
    assert "switch from PostgreSQL to SQLite" in current["content"]
    assert current["details"]["alternatives"] == ["PostgreSQL"]

    history = memories_of(api, team_a.headers, PROJECT, kind="decision", include_superseded="true")
    old = next(m for m in history if m["id"] == first["id"])
    assert old["superseded_by"] == current["id"] and old["valid_to"] is not None
    rels = api.get(f"/v1/memories/{current['id']}/relations", headers=team_a.headers).json()["items"]
    assert any(r["predicate"] == "supersedes" and r["target_id"] == first["id"] for r in rels)


def test_a_later_read_of_a_changed_manifest_supersedes_what_the_earlier_one_declared(container, api, team_a):
    from tests.integration.pipeline_helpers import bash_turns

    def read(session_id, scripts):
        text = '{\n  "scripts": {\n' + scripts + "\n  }\n}"
        raw = claude_transcript(session_id, bash_turns("cat package.json", text))
        assert learn(container, api, team_a.headers, raw=raw, session_id=session_id, project=PROJECT)
        return memories_of(api, team_a.headers, PROJECT, kind="fact")

    [first] = read("r-1", '    "test": "vitest run",\n    "lint": "eslint ."')
    [current] = read("r-2", '    "test": "vitest run --coverage",\n    "lint": "eslint ."')
    assert "vitest run --coverage" in current["content"]
    history = memories_of(api, team_a.headers, PROJECT, kind="fact", include_superseded="true")
    assert next(m for m in history if m["id"] == first["id"])["superseded_by"] == current["id"]


def test_a_preference_against_something_supersedes_the_preference_for_it(container, api, team_a):
    _say(container, api, team_a, "p-1", "Please always use npm for installs.")
    _say(container, api, team_a, "p-2", "Never use npm here, we are a pnpm shop now.")
    [current] = memories_of(api, team_a.headers, PROJECT, kind="preference")
    assert current["content"].startswith("Never use npm")


def test_unrelated_decisions_do_not_supersede_each_other(container, api, team_a):
    _say(container, api, team_a, "d-1", "Let's go with PostgreSQL for the database.")
    _say(container, api, team_a, "d-2", "Let's use Redis for the job queue.")
    assert len(memories_of(api, team_a.headers, PROJECT, kind="decision")) == 2


def test_the_same_preference_in_another_session_merges_and_gains_confidence(container, api, team_a):
    _say(container, api, team_a, "m-1", "Please always run the linter before committing.")
    [before] = memories_of(api, team_a.headers, PROJECT, kind="preference")
    _say(container, api, team_a, "m-2", "Please always run the linter before committing!")
    [after] = memories_of(api, team_a.headers, PROJECT, kind="preference")
    assert after["id"] == before["id"]
    assert after["confidence"] > before["confidence"]
    assert after["details"]["sessions"] == ["m-1", "m-2"]


def test_a_near_duplicate_merges_into_the_existing_memory(container, api, team_a):
    _say(container, api, team_a, "n-1", "I prefer small pull requests with one change each.")
    _say(container, api, team_a, "n-2", "I prefer small pull requests, with one change each")
    prefs = memories_of(api, team_a.headers, PROJECT, kind="preference")
    assert len(prefs) == 1 and prefs[0]["details"]["sessions"] == ["n-1", "n-2"]


def test_a_preference_seen_in_three_projects_is_promoted_to_the_team(container, api, team_a):
    text = "I prefer conventional commit messages."
    for i, project in enumerate(("github.com/acme/a", "github.com/acme/b", "github.com/acme/c")):
        _say(container, api, team_a, f"t-{i}", text, project=project)
    team_wide = api.get("/v1/memories", headers=team_a.headers, params={"scope": "team"}).json()["items"]
    assert [m["content"] for m in team_wide] == ["I prefer conventional commit messages."]
    assert len(team_wide[0]["details"]["projects"]) == 3
    # a fourth project sees it through team scope, and learning it again does not promote twice
    _say(container, api, team_a, "t-3", text, project="github.com/acme/d")
    assert len(api.get("/v1/memories", headers=team_a.headers, params={"scope": "team"}).json()["items"]) == 1


def test_a_preference_said_in_different_words_in_three_projects_is_promoted_once_and_linked(
    container, api, team_a
):
    said = {
        "github.com/acme/a": "I prefer conventional commit messages.",
        "github.com/acme/b": "I prefer conventional commit messages always.",
        "github.com/acme/c": "I really prefer conventional commit messages.",
    }
    for i, (project, text) in enumerate(said.items()):
        _say(container, api, team_a, f"p-{i}", text, project=project)
    team_wide = api.get("/v1/memories", headers=team_a.headers, params={"scope": "team"}).json()["items"]
    assert len(team_wide) == 1
    assert team_wide[0]["details"]["projects"] == sorted(said)

    # a fourth project in yet other words joins the same team memory instead of a second promotion
    _say(container, api, team_a, "p-3", "I prefer conventional commit messages, please.", project="x/d")
    assert len(api.get("/v1/memories", headers=team_a.headers, params={"scope": "team"}).json()["items"]) == 1
    [fourth] = memories_of(api, team_a.headers, "x/d", kind="preference", scope="project")
    related = api.get(f"/v1/memories/{fourth['id']}/relations", headers=team_a.headers)
    assert related.status_code == 200, related.text
    assert any(
        r["predicate"] == "part-of" and r["target_id"] == team_wide[0]["id"] for r in related.json()["items"]
    )


def test_different_preferences_in_three_projects_are_not_promoted(container, api, team_a):
    for i, (project, text) in enumerate(
        {
            "github.com/acme/a": "I prefer conventional commit messages.",
            "github.com/acme/b": "I prefer tabs over spaces in Go files.",
            "github.com/acme/c": "I prefer squash merges for feature branches.",
        }.items()
    ):
        _say(container, api, team_a, f"q-{i}", text, project=project)
    assert api.get("/v1/memories", headers=team_a.headers, params={"scope": "team"}).json()["items"] == []


def test_a_new_read_of_a_manifest_outdates_every_older_description_of_it_not_only_the_newest(
    container, api, team_a
):
    from tests.integration.pipeline_helpers import bash_turns

    # two descriptions of one file left current side by side (a store written before this rule)
    about = {"about": "tasks of package.json", "path": "package.json", "source": "file"}
    older = []
    for scripts in ("test: `jest`", "test: `jest --ci`"):
        body = {"kind": "fact", "content": f"Scripts in package.json:\n- {scripts}", "project": PROJECT}
        made = api.post("/v1/memories", json={**body, "details": about}, headers=team_a.headers)
        assert made.status_code == 201, made.text
        older.append(made.json()["id"])

    text = '{\n  "scripts": {\n    "test": "vitest run"\n  }\n}'
    raw = claude_transcript("m-new", bash_turns("cat package.json", text))
    assert learn(container, api, team_a.headers, raw=raw, session_id="m-new", project=PROJECT)

    [current] = memories_of(api, team_a.headers, PROJECT, kind="fact")
    assert "vitest run" in current["content"]
    history = memories_of(api, team_a.headers, PROJECT, kind="fact", include_superseded="true")
    assert {m["id"]: m["superseded_by"] for m in history if m["id"] in older} == dict.fromkeys(
        older, current["id"]
    )

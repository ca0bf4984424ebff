"""GET /v1/context and /v1/context/prompt through the real app: shape, validation, isolation, handoffs."""

from __future__ import annotations

import pytest
from cairn.services.context import PROMPT_BUDGET
from cairn.services.tokens import count_tokens

pytestmark = [pytest.mark.integration, pytest.mark.slow]

P = "github.com/acme/shop"


def _remember(api, team, **body):
    body.setdefault("project", P)
    resp = api.post("/v1/memories", json=body, headers=team.headers)
    assert resp.status_code == 201, resp.text
    return resp.json()


def _context(api, team, **params):
    params.setdefault("project", P)
    return api.get("/v1/context", params=params, headers=team.headers)


def test_context_answers_markdown_tokens_and_ids(api, team_a):
    m = _remember(api, team_a, kind="preference", content="Prefer small pull requests")
    resp = _context(api, team_a, agent="codex", budget=500)
    assert resp.status_code == 200
    body = resp.json()
    assert m["id"] in body["memory_ids"] and "Prefer small pull requests" in body["markdown"]
    assert body["tokens"] == count_tokens(body["markdown"]) <= 500
    assert body["handoff_id"] is None


def test_a_budget_over_2000_is_a_clear_400(api, team_a):
    resp = _context(api, team_a, budget=2001)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_input"
    assert "2000" in resp.json()["error"]["message"]


@pytest.mark.parametrize(
    "params",
    [{"project": ""}, {"budget": "lots"}, {"agent": "x" * 65}, {"prompt": "p" * 2001}],
)
def test_bad_parameters_are_4xx_not_500(api, team_a, params):
    resp = _context(api, team_a, **params)
    assert 400 <= resp.status_code < 500, resp.text


def test_context_needs_a_key(api):
    assert api.get("/v1/context", params={"project": P}).status_code == 401


def test_team_b_never_sees_team_a_memories_or_handoffs(api, team_a, team_b):
    _remember(api, team_a, kind="preference", content="alpha-only convention")
    _remember(api, team_a, kind="fact", content="alpha-only insight", scope="team", project=None)
    h = _remember(api, team_a, kind="handoff", content="alpha handoff", provenance={"agent": "codex"})
    body = _context(api, team_b, agent="codex").json()
    assert "alpha" not in body["markdown"] and body["memory_ids"] == [] and body["handoff_id"] is None
    assert "nothing is remembered yet" in body["markdown"]
    assert _context(api, team_a, agent="codex").json()["handoff_id"] == h["id"]


def test_a_handoff_is_delivered_once_over_http(api, team_a):
    h = _remember(api, team_a, kind="handoff", content="resume the billing refactor")
    first = _context(api, team_a, agent="claude-code").json()
    assert first["handoff_id"] == h["id"] and "resume the billing refactor" in first["markdown"]
    second = _context(api, team_a, agent="claude-code").json()
    assert second["handoff_id"] is None and "resume the billing refactor" not in second["markdown"]


def test_a_prompt_puts_relevant_memories_first(api, team_a):
    _remember(api, team_a, kind="preference", content="Use tabs in Makefiles")
    _remember(api, team_a, kind="preference", content="Name database migrations by date")
    _remember(api, team_a, kind="preference", content="Keep README examples runnable")
    md = _context(api, team_a, prompt="write a database migration").json()["markdown"]
    section = md.split("## Preferences and conventions", 1)[1]
    assert section.index("Name database migrations") < section.index("Use tabs")


def test_prompt_context_returns_a_few_relevant_memories(api, team_a):
    m = _remember(api, team_a, kind="decision", content="Payments retry with exponential backoff")
    _remember(api, team_a, kind="preference", content="Use tabs in Makefiles")
    resp = api.get(
        "/v1/context/prompt",
        params={"project": P, "prompt": "how do payment retries work?", "limit": 1},
        headers=team_a.headers,
    )
    body = resp.json()
    assert resp.status_code == 200 and body["memory_ids"] == [m["id"]]
    assert body["tokens"] <= PROMPT_BUDGET


def test_prompt_context_shows_the_part_of_a_long_memory_that_bears_on_the_prompt(api, team_a):
    filler = "\n".join(
        f"Step {i}: renamed the settings loader module and reran the formatter" for i in range(12)
    )
    content = filler + "\nThe webhook signature check fails when the clock skew exceeds 300 seconds."
    _remember(api, team_a, kind="episode", content=content)
    md = api.get(
        "/v1/context/prompt",
        params={"project": P, "prompt": "why does the webhook signature check fail?"},
        headers=team_a.headers,
    ).json()["markdown"]
    # not the first 500 characters of the text: the passage the prompt is about, and an id for the rest
    assert "clock skew exceeds 300 seconds" in md and "[mem_" in md


# a preference stated, a decision recorded and a question asked, as a person types them in one prompt
SEVERAL_PARTS = (
    "Please always use pnpm instead of npm in this repository. "
    "We decided to go with PostgreSQL 16 for the orders service. What port does the payments stub use?"
)


def test_a_prompt_of_several_parts_gets_the_memory_that_answers_one_of_them(api, team_a):
    m = _remember(
        api, team_a, kind="fact", content="The payments stub listens on port 4010; `make stub` starts it."
    )
    _remember(api, team_a, kind="preference", content="Use tabs in Makefiles")
    body = api.get(
        "/v1/context/prompt", params={"project": P, "prompt": SEVERAL_PARTS}, headers=team_a.headers
    ).json()
    assert m["id"] in body["memory_ids"] and "port 4010" in body["markdown"]


def test_a_prompt_of_several_parts_none_of_which_the_store_knows_gets_nothing(api, team_a):
    _remember(
        api, team_a, kind="fact", content="The payments stub listens on port 4010; `make stub` starts it."
    )
    prompt = (
        "We decided to go with PostgreSQL 16 for the orders service. "
        "Which Grafana dashboard shows its latency?"
    )
    body = api.get(
        "/v1/context/prompt", params={"project": P, "prompt": prompt}, headers=team_a.headers
    ).json()
    assert body["memory_ids"] == [] and body["markdown"] == ""


def test_prompt_context_of_another_team_is_empty(api, team_a, team_b):
    _remember(api, team_a, kind="decision", content="Payments retry with exponential backoff")
    body = api.get(
        "/v1/context/prompt", params={"project": P, "prompt": "payments retry"}, headers=team_b.headers
    ).json()
    assert body["markdown"] == "" and body["memory_ids"] == []

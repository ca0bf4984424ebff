"""Transcript excerpts: every session is searchable as cited steps, recall can say "nothing relevant",
and an excerpt's lines open through the API."""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import bash_turns, claude_transcript, learn, memories_of

pytestmark = pytest.mark.integration
PROJECT = "github.com/acme/app"


def _session(session_id: str) -> bytes:
    return claude_transcript(
        session_id,
        [
            ("user", "Find out why the payments webhook test is flaky"),
            *bash_turns(
                "make test-webhooks",
                "--- FAIL: TestWebhookRetry (0.31s)\n"
                "    webhook_test.go:88: signature mismatch: clock skew 4s",
                error=True,
            ),
            ("assistant", [{"type": "text", "text": "The HMAC check rejects requests with clock skew."}]),
        ],
    )


def test_what_was_only_said_in_tool_output_is_recalled_as_a_cited_excerpt(container, api, team_a):
    session = learn(container, api, team_a.headers, raw=_session("s-ex"), session_id="s-ex", project=PROJECT)
    assert session["status"] == "learned", session
    assert session["stats"]["consolidate"]["excerpts"] >= 1
    excerpts = memories_of(api, team_a.headers, PROJECT, kind="excerpt")
    assert excerpts and all(e["provenance"]["session_id"] == "s-ex" for e in excerpts)
    found = api.post(
        "/v1/search",
        headers=team_a.headers,
        json={"query": "webhook signature mismatch clock skew", "project": PROJECT},
    ).json()["hits"]
    cited = [h["memory"] for h in found if h["memory"]["kind"] == "excerpt"]
    assert cited and "signature mismatch" in cited[0]["content"]


def test_an_excerpts_lines_open_through_the_api_and_stay_in_the_team(container, api, team_a, team_b):
    learn(container, api, team_a.headers, raw=_session("s-open"), session_id="s-open", project=PROJECT)
    [excerpt] = memories_of(api, team_a.headers, PROJECT, kind="excerpt", session_id="s-open")
    start, end = excerpt["details"]["session_lines"]
    window = api.get(
        "/v1/sessions/s-open/transcript",
        headers=team_a.headers,
        params={"line_start": start, "line_end": end},
    )
    assert window.status_code == 200, window.text
    body = window.json()
    assert [ln["number"] for ln in body["lines"]] == list(range(start, end + 1))
    assert any("make test-webhooks" in ln["text"] for ln in body["lines"])
    other = api.get("/v1/sessions/s-open/transcript", headers=team_b.headers, params={"line_start": 1})
    assert other.status_code == 404
    bad = api.get("/v1/sessions/s-open/transcript", headers=team_a.headers, params={"line_start": 0})
    assert bad.status_code == 422


def test_learning_the_same_session_again_adds_no_excerpt(container, api, team_a):
    raw = _session("s-again")
    learn(container, api, team_a.headers, raw=raw, session_id="s-again", project=PROJECT)
    before = {m["id"] for m in memories_of(api, team_a.headers, PROJECT)}
    resp = api.post("/v1/sessions/s-again/reprocess", headers=team_a.headers, json={"force": True})
    assert resp.status_code == 202
    assert container.runner.wait_idle(120)
    assert {m["id"] for m in memories_of(api, team_a.headers, PROJECT)} == before


def test_recall_answers_nothing_when_the_question_names_something_never_discussed(container, api, team_a):
    learn(container, api, team_a.headers, raw=_session("s-neg"), session_id="s-neg", project=PROJECT)
    found = api.post(
        "/v1/search",
        headers=team_a.headers,
        json={"query": "Where do we configure Sentry for the payments webhook?", "project": PROJECT},
    ).json()
    assert found["hits"] == []

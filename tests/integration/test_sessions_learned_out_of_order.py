"""Sessions are ordered by when they ran, not by when the pipeline got to them: a long session learned
after a later short one, a retried upload or a backfill must not put an older session's work in front."""

from __future__ import annotations

import pytest

from tests.integration.pipeline_helpers import bash_turns, claude_transcript, learn

pytestmark = pytest.mark.integration
PROJECT = "github.com/acme/shop"


def _session(session_id: str, day: str, request: str, command: str, report: str) -> bytes:
    return claude_transcript(
        session_id,
        [
            ("user", request),
            *bash_turns(command, "ok"),
            ("assistant", [{"type": "text", "text": report}]),
        ],
        day=day,
    )


def _block(api, headers) -> str:
    resp = api.get("/v1/context", params={"project": PROJECT, "agent": "claude-code"}, headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()["markdown"]


def test_an_older_session_learned_last_does_not_become_where_the_work_left_off(container, api, team_a):
    later = _session(
        "s-later",
        "2026-03-02",
        "Add a retry budget to the webhook client",
        "go test ./webhooks/...",
        "The webhook client now gives up after a retry budget of five attempts; the tests pass.",
    )
    earlier = _session(
        "s-earlier",
        "2026-03-01",
        "Rename the payments package to billing",
        "go build ./...",
        "The payments package is billing now, and every import was updated; the build passes.",
    )
    learn(
        container,
        api,
        team_a.headers,
        raw=later,
        session_id="s-later",
        project=PROJECT,
        started_at="2026-03-02T10:00:00+00:00",
    )
    learn(
        container,
        api,
        team_a.headers,
        raw=earlier,
        session_id="s-earlier",
        project=PROJECT,
        started_at="2026-03-01T10:00:00+00:00",
    )

    left_off = _block(api, team_a.headers).split("## Where you left off")[1].split("\n## ")[0]

    assert "Last request: Add a retry budget to the webhook client" in left_off
    assert "Rename the payments package" not in left_off.split("Asked before that")[0]


def test_what_a_session_taught_is_dated_by_when_it_ran(container, api, team_a):
    learn(
        container,
        api,
        team_a.headers,
        project=PROJECT,
        session_id="s-march",
        raw=_session(
            "s-march", "2026-03-01", "Bump the Go toolchain to 1.25", "go build ./...", "Go 1.25 builds it."
        ),
        started_at="2026-03-01T10:00:00+00:00",
    )
    items = api.get(
        "/v1/memories", headers=team_a.headers, params={"project": PROJECT, "session_id": "s-march"}
    ).json()["items"]

    assert items and {m["valid_from"][:10] for m in items} == {"2026-03-01"}
    assert all(m["created_at"][:10] != "2026-03-01" for m in items)  # Cairn wrote them today

"""A session sent after it ended (`cairn backfill`, `cairn ingest`) is dated by when it ran, so the digest
and the UI put it where it belongs; the hooks' uploads, which carry no date, are dated as before."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from cairn.capture.upload import upload_part

pytestmark = [pytest.mark.integration]
PROJECT = "github.com/acme/shop"


def grant(api, headers, session_id: str, part: int = 1, **extra) -> int:
    body = {
        "agent": "codex",
        "session_id": session_id,
        "project": PROJECT,
        "part": part,
        "bytes": 10,
        **extra,
    }
    return api.post("/v1/uploads", headers=headers, json=body).status_code


def test_an_upload_that_says_when_its_session_ran_dates_the_session_so(container, api, team_a):
    assert grant(api, team_a.headers, "old-1", started_at="2025-09-03T00:52:31Z") == 201
    assert grant(api, team_a.headers, "old-1", part=2) == 201  # a later part without a date keeps it
    session = container.sessions.get(team_a.team_id, "old-1")
    assert session.started_at == datetime(2025, 9, 3, 0, 52, 31, tzinfo=UTC)


def test_a_date_in_the_future_is_not_believed_and_an_undated_upload_is_dated_now(container, api, team_a):
    before = datetime.now(UTC)
    assert grant(api, team_a.headers, "future-1", started_at="2999-01-01T00:00:00Z") == 201
    assert grant(api, team_a.headers, "plain-1") == 201
    for sid in ("future-1", "plain-1"):
        assert before <= container.sessions.get(team_a.team_id, sid).started_at <= datetime.now(UTC)


def test_a_server_from_before_the_date_still_takes_the_upload_undated():
    bodies = []

    def old_server(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/uploads":
            bodies.append(request.content)
            if b"started_at" in request.content:  # extra="forbid": an unknown field is a 422
                return httpx.Response(
                    422, json={"error": {"message": "started_at: extra fields not permitted"}}
                )
            return httpx.Response(201, json={"method": "PUT", "url": "http://127.0.0.1:9/put", "headers": {}})
        return httpx.Response(200, json={})

    upload_part(
        "http://cairn.test",
        "ck_test",
        agent="codex",
        session_id="s1",
        project=PROJECT,
        part=1,
        data=b"\x1f\x8b-data",
        transport=httpx.MockTransport(old_server),
        started_at=1_756_860_751.0,
    )
    assert len(bodies) == 2 and b"started_at" not in bodies[1]

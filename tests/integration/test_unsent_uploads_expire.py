"""A session granted an upload that never came does not stay `received` forever: it fails, saying why."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from cairn.bootstrap import build_container
from cairn.settings import Settings

from tests.integration.pipeline_helpers import claude_transcript, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/shop"
REASON = "no transcript part was uploaded before the upload URL expired"


def grant(api, headers, session_id: str) -> None:
    body = {"agent": "claude-code", "session_id": session_id, "project": PROJECT, "part": 1, "bytes": 10}
    assert api.post("/v1/uploads", headers=headers, json=body).status_code == 201


def age(container, team_id: str, session_id: str, by: timedelta) -> None:
    session = container.sessions.get(team_id, session_id)
    container.sessions.put(replace(session, updated_at=session.updated_at - by))


def test_a_session_whose_upload_never_came_is_failed_with_a_reason_at_start_up(
    tmp_path, container, api, team_a
):
    grant(api, team_a.headers, "never-sent")
    grant(api, team_a.headers, "just-granted")
    upload(
        api,
        team_a.headers,
        raw=claude_transcript("sent", [("user", "hi")]),
        session_id="sent",
        project=PROJECT,
    )
    assert container.runner.wait_idle(60)
    ttl = container.settings.upload_url_ttl_s
    for session_id in ("never-sent", "sent"):
        age(container, team_a.team_id, session_id, timedelta(seconds=ttl) + timedelta(hours=1))
    sent_before = container.sessions.get(team_a.team_id, "sent")
    container.close()

    restarted = build_container(Settings(mode="local", home=container.settings.home))
    try:
        never = restarted.sessions.get(team_a.team_id, "never-sent")
        assert never.status == "failed"
        assert never.stats["error"]["message"] == REASON and never.stats["error"]["code"] == "upload_expired"
        assert restarted.sessions.get(team_a.team_id, "just-granted").status == "received"  # URL still valid
        assert restarted.sessions.get(team_a.team_id, "sent") == sent_before  # a part came: untouched
    finally:
        restarted.close()


def test_the_sweep_counts_what_it_failed_and_a_second_run_changes_nothing(container, api, team_a):
    grant(api, team_a.headers, "never-sent")
    age(container, team_a.team_id, "never-sent", timedelta(days=1))
    assert container.uploads.expire_unsent([team_a.team_id]) == 1
    failed = container.sessions.get(team_a.team_id, "never-sent")
    assert container.uploads.expire_unsent([team_a.team_id]) == 0
    assert container.sessions.get(team_a.team_id, "never-sent") == failed

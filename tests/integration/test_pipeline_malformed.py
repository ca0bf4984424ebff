"""A transcript the pipeline cannot read fails clearly, keeps the original, and can be reprocessed."""

from __future__ import annotations

import gzip

import pytest

from tests.integration.pipeline_helpers import claude_transcript, learn, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/broken"


def test_a_malformed_transcript_fails_with_a_clear_reason_and_is_kept(container, api, team_a):
    garbage = b"this is not json\nnor is this line\n"
    session = learn(container, api, team_a.headers, raw=garbage, session_id="bad-1", project=PROJECT)
    assert session["status"] == "failed"
    error = session["stats"]["error"]
    assert error["stage"] == "parse" and error["code"] == "invalid_input"
    assert "not a transcript" in error["message"]
    [key] = session["transcript_keys"]
    assert gzip.decompress(container.blobs.get(key)) == garbage  # the original is kept


def test_a_failed_session_can_be_reprocessed_once_its_transcript_is_readable(container, api, team_a):
    learn(container, api, team_a.headers, raw=b"{not json\n", session_id="bad-2", project=PROJECT)
    resp = api.post("/v1/sessions/bad-2/reprocess", headers=team_a.headers, json={})
    assert resp.status_code == 202
    assert container.runner.wait_idle(60)
    assert api.get("/v1/sessions/bad-2", headers=team_a.headers).json()["status"] == "failed"
    # the same part uploaded again, readable this time (e.g. a fixed export), then reprocessed
    good = claude_transcript("bad-2", [("user", "Let's use Redis for the job queue.")])
    upload(api, team_a.headers, raw=good, session_id="bad-2", project=PROJECT)
    assert container.runner.wait_idle(60)
    assert (
        api.post("/v1/sessions/bad-2/reprocess", headers=team_a.headers, json={"force": True}).status_code
        == 202
    )
    assert container.runner.wait_idle(60)
    session = api.get("/v1/sessions/bad-2", headers=team_a.headers).json()
    assert session["status"] == "learned" and session["stats"]["error"] is None


def test_an_upload_that_is_not_gzip_is_refused_and_nothing_is_stored(container, api, team_a):
    grant = api.post(
        "/v1/uploads",
        headers=team_a.headers,
        json={"agent": "claude-code", "session_id": "bad-3", "project": PROJECT, "part": 1, "bytes": 10},
    ).json()
    path = grant["url"].split("://", 1)[1].split("/", 1)[1]
    resp = api.put("/" + path, content=b"plain text", headers={"Content-Type": "application/gzip"})
    assert resp.status_code == 400 and resp.json()["error"]["message"] == "upload is not gzip data"
    assert not container.blobs.exists(grant["key"])

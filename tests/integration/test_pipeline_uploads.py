"""The upload path: validation, size and type limits, team confinement, signed tokens, session routes."""

from __future__ import annotations

import gzip
from urllib.parse import urlsplit

import pytest

from tests.integration.pipeline_helpers import claude_transcript, learn, memories_of, upload

pytestmark = pytest.mark.integration
BODY = {
    "agent": "claude-code",
    "session_id": "sess-1",
    "project": "github.com/acme/app",
    "part": 1,
    "bytes": 100,
}


def _grant(api, headers, **changes):
    return api.post("/v1/uploads", headers=headers, json={**BODY, **changes})


def test_a_grant_is_confined_to_the_callers_team_prefix(api, team_a):
    resp = _grant(api, team_a.headers)
    assert resp.status_code == 201
    target = resp.json()
    assert target["key"].startswith(f"teams/{team_a.team_id}/projects/github.com-acme-app-")
    assert target["key"].endswith("/sessions/sess-1/transcript-1.jsonl.gz")
    assert target["method"] == "PUT" and target["max_bytes"] == 100
    assert target["headers"] == {"Content-Type": "application/gzip"}


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"agent": "vim"}, 400),
        ({"session_id": "../../etc"}, 400),
        ({"session_id": "a/b"}, 400),
        ({"part": 0}, 422),
        ({"bytes": 0}, 422),
        ({"bytes": 10**12}, 400),
        ({"content_type": "text/plain"}, 400),
        ({"team_id": "team_other"}, 422),
        ({"key": "teams/x/anything"}, 422),
    ],
)
def test_bad_upload_requests_get_a_clear_4xx(api, team_a, changes, status):
    resp = _grant(api, team_a.headers, **changes)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["message"]


def test_a_read_only_key_cannot_upload(container, api, team_a):
    reader = api.post(
        "/v1/admin/keys", headers=team_a.headers, json={"member": "r", "scopes": ["read"]}
    ).json()
    resp = _grant(api, {"Authorization": f"Bearer {reader['secret']}"})
    assert resp.status_code == 403


def test_no_key_no_grant(api):
    assert _grant(api, {}).status_code == 401


def test_a_session_cannot_switch_projects(api, team_a):
    assert _grant(api, team_a.headers).status_code == 201
    assert _grant(api, team_a.headers, project="github.com/acme/other").status_code == 409


def _put(api, target, data, content_type="application/gzip"):
    return api.put(urlsplit(target["url"]).path, content=data, headers={"Content-Type": content_type})


def test_the_put_enforces_the_granted_size_and_type(container, api, team_a):
    data = gzip.compress(b"{}\n")
    target = _grant(api, team_a.headers, bytes=len(data)).json()
    assert _put(api, target, data, "text/plain").status_code == 400
    assert _put(api, target, data + b"x" * 10).status_code == 413
    assert not container.blobs.exists(target["key"])


def test_a_tampered_token_is_refused(api, team_a):
    target = _grant(api, team_a.headers).json()
    payload, _, signature = urlsplit(target["url"]).path.rsplit("/", 1)[1].partition(".")
    forged = f"/v1/uploads/{payload[:-2]}AA.{signature}"
    resp = api.put(forged, content=gzip.compress(b"{}"), headers={"Content-Type": "application/gzip"})
    assert resp.status_code == 403


def test_another_team_cannot_see_or_reprocess_a_session(container, api, team_a, team_b):
    raw = claude_transcript("shared-id", [("user", "Let's use Redis for the job queue.")])
    learn(container, api, team_a.headers, raw=raw, session_id="shared-id", project="github.com/acme/app")
    assert api.get("/v1/sessions/shared-id", headers=team_b.headers).status_code == 404
    assert api.post("/v1/sessions/shared-id/reprocess", headers=team_b.headers, json={}).status_code == 404
    assert api.get("/v1/sessions", headers=team_b.headers).json()["items"] == []
    # team b uploading a session with the same id writes under its own prefix and its own session
    target = _grant(api, team_b.headers, session_id="shared-id").json()
    assert target["key"].startswith(f"teams/{team_b.team_id}/")
    assert api.get("/v1/memories", headers=team_b.headers).json()["items"] == []


def test_a_part_stored_while_its_session_is_learned_is_kept_and_learned_next(
    container, api, team_a, monkeypatch
):
    from cairn.pipeline.running import inline as runner

    first = claude_transcript("race-1", [("user", "Let's go with FastAPI for the HTTP layer.")])
    second = claude_transcript("race-1", [("user", "Please always run the tests with -q.")])
    real_run_stages = runner.run_stages
    calls = []

    def run_stages_while_a_part_arrives(deps, ref):
        calls.append(deps.sessions.get(ref.team_id, ref.session_id).transcript_keys)
        if len(calls) == 1:
            upload(api, team_a.headers, raw=second, session_id="race-1", project="acme/app", part=2)
        return real_run_stages(deps, ref)

    monkeypatch.setattr(runner, "run_stages", run_stages_while_a_part_arrives)
    session = learn(container, api, team_a.headers, raw=first, session_id="race-1", project="acme/app")

    assert [k.rsplit("/", 1)[1] for k in session["transcript_keys"]] == [
        "transcript-1.jsonl.gz",
        "transcript-2.jsonl.gz",
    ]
    assert session["status"] == "learned"
    assert len(calls) == 2  # learned again with the part that came in meanwhile
    contents = {m["content"] for m in memories_of(api, team_a.headers, "acme/app")}
    assert {"Let's go with FastAPI for the HTTP layer.", "Please always run the tests with -q."} <= contents


def test_a_restarted_server_resumes_sessions_the_last_run_left_unfinished(tmp_path, team_a, container, api):
    from dataclasses import replace

    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    raw = claude_transcript("cut-1", [("user", "Let's use Postgres for reporting.")])
    upload(api, team_a.headers, raw=raw, session_id="cut-1", project="acme/app")
    assert container.runner.wait_idle(120)
    # as if the server had stopped mid-run: the part is stored, the status says processing
    container.sessions.update(team_a.team_id, "cut-1", lambda s: replace(s, status="processing", stats={}))
    # a grant whose upload never came: nothing to learn, left alone
    api.post(
        "/v1/uploads",
        headers=team_a.headers,
        json={**BODY, "session_id": "never-sent", "project": "acme/app"},
    )
    container.close()

    restarted = build_container(Settings(mode="local", home=tmp_path / "home"))
    try:
        assert restarted.runner.resume_unfinished(restarted.teams) == 1
        assert restarted.runner.wait_idle(120)
        assert restarted.sessions.get(team_a.team_id, "cut-1").status == "learned"
        assert restarted.sessions.get(team_a.team_id, "never-sent").status == "received"
    finally:
        restarted.close()

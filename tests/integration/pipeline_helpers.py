"""Shared by the pipeline and capture tests: upload a transcript through the real API, wait for learning."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from cairn.capture.upload import prepare

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO.parent / "shared" / "fixtures" / "transcripts"
CLAUDE_FIXTURE = (
    FIXTURES / "claude-code" / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
CODEX_DIR = FIXTURES / "codex" / "localpush"


def upload(
    api,
    headers,
    *,
    raw: bytes,
    session_id: str,
    project: str,
    agent: str = "claude-code",
    part: int = 1,
    prepared: bool = True,
) -> dict:
    """POST /v1/uploads, then PUT the (redacted, gzipped) bytes to the presigned path, as a hook would."""
    data = prepare(raw).data if prepared else raw
    grant = api.post(
        "/v1/uploads",
        headers=headers,
        json={
            "agent": agent,
            "session_id": session_id,
            "project": project,
            "part": part,
            "bytes": len(data),
            "content_type": "application/gzip",
        },
    )
    assert grant.status_code == 201, grant.text
    target = grant.json()
    put = api.put(urlsplit(target["url"]).path, content=data, headers=target["headers"])
    assert put.status_code == 200, put.text
    return target


def learn(container, api, headers, **kwargs) -> dict:
    """Upload and wait until the inline runner has learned from the session; returns the session JSON."""
    upload(api, headers, **kwargs)
    assert container.runner.wait_idle(120)
    resp = api.get(f"/v1/sessions/{kwargs['session_id']}", headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()


def memories_of(api, headers, project: str, **params) -> list[dict]:
    resp = api.get("/v1/memories", headers=headers, params={"project": project, "limit": 500, **params})
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]

"""Whole-team export and import staged in the blob store, in local mode: the same routes and service as
AWS, with the worker on a thread and the signed local token standing in for S3's presigned URLs."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.integration

PROJECT = "github.com/acme/shop"


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _wait(api, path: str, headers: dict) -> dict:
    deadline = time.monotonic() + 30
    while True:
        status = api.get(path, headers=headers).json()
        if status["state"] in ("done", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def _export(api, headers: dict) -> tuple[dict, str]:
    started = api.post("/v1/admin/exports", headers=headers)
    assert started.status_code == 202, started.text
    status = _wait(api, f"/v1/admin/exports/{started.json()['id']}", headers)
    assert status["state"] == "done", status
    body = api.get(_path(status["url"]))  # no key: the signed link is its own permission
    assert body.status_code == 200
    return status, body.text


def test_an_export_is_written_by_the_worker_and_fetched_by_its_signed_link(api, team_a):
    for i in range(3):
        api.post(
            "/v1/memories",
            json={"kind": "fact", "content": f"fact {i}", "project": PROJECT},
            headers=team_a.headers,
        )
    status, text = _export(api, team_a.headers)
    lines = [json.loads(line) for line in text.splitlines()]
    assert status["records"] == len(lines) == 3
    assert all("vector" in line for line in lines)


def test_an_uploaded_import_is_run_by_the_worker_and_reports_its_counts(api, team_a, team_b):
    api.post(
        "/v1/memories", json={"kind": "fact", "content": "moved", "project": PROJECT}, headers=team_a.headers
    )
    _, text = _export(api, team_a.headers)
    data = text.encode()
    granted = api.post("/v1/admin/imports", json={"bytes": len(data)}, headers=team_b.headers)
    assert granted.status_code == 201, granted.text
    upload = granted.json()["upload"]
    assert api.put(_path(upload["url"]), content=data, headers=upload["headers"]).status_code == 200
    started = api.post(f"/v1/admin/imports/{granted.json()['id']}/start", headers=team_b.headers)
    assert started.status_code == 202, started.text
    status = _wait(api, f"/v1/admin/imports/{granted.json()['id']}", team_b.headers)
    assert status["state"] == "done" and status["counts"]["memories"] == 1, status
    hits = api.post("/v1/search", json={"query": "moved"}, headers=team_b.headers).json()["hits"]
    assert hits and hits[0]["memory"]["content"] == "moved"


def test_a_transfer_of_another_team_is_not_found(api, team_a, team_b):
    started = api.post("/v1/admin/exports", headers=team_a.headers).json()
    r = api.get(f"/v1/admin/exports/{started['id']}", headers=team_b.headers)
    assert r.status_code == 404


def test_an_import_started_before_its_file_is_uploaded_is_refused_in_one_line(api, team_a):
    granted = api.post("/v1/admin/imports", json={"bytes": 10}, headers=team_a.headers).json()
    r = api.post(f"/v1/admin/imports/{granted['id']}/start", headers=team_a.headers)
    assert r.status_code == 400 and "not been uploaded" in r.json()["error"]["message"]


def test_a_download_link_altered_or_used_as_an_upload_token_is_refused(api, team_a):
    status, _ = _export(api, team_a.headers)
    path = _path(status["url"])
    assert api.get(path[:-2] + "xx").status_code == 403
    token = path.rsplit("/", 1)[-1]
    assert api.put(f"/v1/uploads/{token}", content=b"x").status_code == 403


def test_a_malformed_import_file_fails_the_transfer_with_the_line_number(api, team_a):
    data = b'{"type": "memory", "record": {"id": 1}}\n'
    granted = api.post("/v1/admin/imports", json={"bytes": len(data)}, headers=team_a.headers).json()
    upload = granted["upload"]
    api.put(_path(upload["url"]), content=data, headers=upload["headers"])
    api.post(f"/v1/admin/imports/{granted['id']}/start", headers=team_a.headers)
    status = _wait(api, f"/v1/admin/imports/{granted['id']}", team_a.headers)
    assert status["state"] == "failed" and "line 1" in status["error"]

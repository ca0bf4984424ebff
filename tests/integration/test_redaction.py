"""Redactable history: after an admin redacts a string, nothing the store keeps holds it, in both modes.

Local: a session learned through the real pipeline (transcript part, stage outputs, excerpts), a memory
corrected twice (three versions), then `POST /v1/admin/redact`; afterwards no memory version, session,
blob (gzip opened), search hit, export line or byte of the SQLite file (nor its WAL) holds the string.
AWS: DynamoDB and S3 (versioned) on moto, OpenSearch on osmem; afterwards no table item, no object
version and no index document holds it.
"""

from __future__ import annotations

import gzip
import json
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from cairn.bootstrap import build_container, shared_embedder
from cairn.domain.audit import AuditAction
from cairn.domain.models import KeyScope, MemoryKind, Session
from cairn.services.memories import NewMemory
from cairn.settings import Settings

from tests.contract.adapters_aws import (
    CREDENTIALS,
    REGION,
    aws_client,
    drop_table,
    moto_endpoint,
    new_table,
    osmem_server,
)
from tests.integration.pipeline_helpers import claude_transcript, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRET = "Hunter2PurpleOtter42"  # no secret pattern: capture's own redaction leaves it, as a leak would be
PROJECT = "github.com/acme/shop"


def _holds(data: bytes) -> bool:
    if data.startswith(b"\x1f\x8b"):
        data = gzip.decompress(data)
    return SECRET.encode() in data or SECRET.lower().encode() in data


def _blob_files(home: Path) -> list[Path]:
    return [p for p in (home / "blobs").rglob("*") if p.is_file()] if (home / "blobs").exists() else []


def test_local_redaction_leaves_the_string_nowhere(container, api, team_a):
    home = container.settings.home
    h = team_a.headers
    turns = [
        ("user", f"The staging database password is {SECRET}; always use port 5433 for staging."),
        ("assistant", [{"type": "text", "text": f"Noted: staging uses port 5433 and password {SECRET}."}]),
    ]
    raw = gzip.compress(claude_transcript("sess-leak", turns))
    learn(container, api, h, raw=raw, session_id="sess-leak", project=PROJECT, prepared=False)
    first = api.post(
        "/v1/memories", headers=h, json={"kind": "fact", "content": f"db pw {SECRET}", "project": PROJECT}
    )
    second = api.post(
        f"/v1/memories/{first.json()['id']}/supersede",
        headers=h,
        json={"kind": "fact", "content": f"the db password {SECRET} rotates monthly", "project": PROJECT},
    )
    assert second.status_code == 201, second.text
    stored = [b for b in map(Path.read_bytes, _blob_files(home)) if _holds(b)]
    assert len(stored) >= 2, "the transcript part and a stage output hold it before"
    assert _holds((home / "cairn.db").read_bytes()) or _holds((home / "cairn.db-wal").read_bytes())

    done = api.post("/v1/admin/redact", headers=h, json={"string": SECRET})
    assert done.status_code == 200, done.text
    assert done.json()["memories"] >= 2 and done.json()["blobs"] >= 2

    every = api.get("/v1/memories", headers=h, params={"include_superseded": True, "limit": 500}).json()[
        "items"
    ]
    assert len(every) >= 2 and not any(SECRET in json.dumps(m) for m in every)
    assert not any(SECRET in json.dumps(s) for s in api.get("/v1/sessions", headers=h).json()["items"])
    hits = api.post("/v1/search", headers=h, json={"query": SECRET, "include_superseded": True}).json()[
        "hits"
    ]
    assert not any(SECRET in json.dumps(hit) for hit in hits)
    assert SECRET not in api.get("/v1/admin/export", headers=h).text
    assert not [p for p in _blob_files(home) if _holds(p.read_bytes())]
    for name in ("cairn.db", "cairn.db-wal"):
        path = home / name
        assert not path.exists() or not _holds(path.read_bytes()), f"{name} still holds the string"
    trail = api.get("/v1/audit", headers=h, params={"limit": 500}).json()["items"]
    assert [e["action"] for e in trail if e["action"] == "redact"] == ["redact"]
    assert SECRET not in json.dumps(trail)


def test_a_redaction_needs_an_admin_key_and_a_real_string(container, api, team_a):
    _, secret = container.keys.create_key(
        container.keys.authenticate(team_a.admin), "cy", "w", frozenset({KeyScope.WRITE})
    )
    refused = api.post(
        "/v1/admin/redact", headers={"Authorization": f"Bearer {secret}"}, json={"string": SECRET}
    )
    assert refused.status_code == 403
    short = api.post("/v1/admin/redact", headers=team_a.headers, json={"string": "ab"})
    assert short.status_code == 422


@pytest.fixture
def aws(monkeypatch):
    """A container in AWS mode over moto (DynamoDB, versioned S3) and osmem (OpenSearch)."""
    table = new_table()
    bucket = f"cairn-{uuid.uuid4().hex[:12]}"
    s3 = aws_client("s3")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for name, value in (
        ("AWS_ACCESS_KEY_ID", CREDENTIALS[0]),
        ("AWS_SECRET_ACCESS_KEY", CREDENTIALS[1]),
        ("AWS_DEFAULT_REGION", REGION),
        ("AWS_ENDPOINT_URL_S3", moto_endpoint()),
    ):
        monkeypatch.setenv(name, value)
    try:
        with osmem_server().clone() as clone:
            settings = Settings(
                mode="aws",
                table_name=table.name,
                bucket=bucket,
                opensearch_endpoint=clone.url,
                opensearch_auth="none",
                dynamo_endpoint=moto_endpoint(),
                aws_region=REGION,
            )
            container = build_container(settings, embedder=shared_embedder())
            yield container, table, bucket, s3, clone.url
    finally:
        drop_table(table)


def test_aws_redaction_leaves_the_string_in_no_item_object_version_or_index_document(aws):
    container, table, bucket, s3, search_url = aws
    team, _, secret = container.keys.create_team("alpha", "ana")
    admin = container.keys.authenticate(secret)
    new = NewMemory(kind=MemoryKind.FACT, content=f"db pw {SECRET}", project=PROJECT)
    first = container.memories.remember(admin, new)
    closed, current = container.memories.supersede(
        admin, first.id, replace(new, content=f"the db password {SECRET} rotates monthly")
    )
    container.indexer.index([closed, current])  # as the stream indexer would
    container.sessions.put(
        Session(
            id="sess-leak", team_id=team.id, project=PROJECT, agent="codex", stats={"error": f"bad {SECRET}"}
        )
    )
    prefix = f"teams/{team.id}/projects/x/sessions/sess-leak/"
    container.blobs.put(prefix + "transcript-1.jsonl.gz", gzip.compress(f'{{"t": "{SECRET}"}}'.encode()))
    for version in ("one", "two"):  # two versions of a stage output: the older must go too
        container.blobs.put(prefix + "stages/parse/events.json", json.dumps({version: SECRET}).encode())

    report = container.history.redact(admin, SECRET)
    assert (report.memories, report.sessions, report.blobs) == (2, 1, 2)
    assert report.old_versions >= 3

    items = aws_client("dynamodb").scan(TableName=table.name)["Items"]
    assert items and not any(SECRET in json.dumps(i) for i in items)
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert len(versions) == 2
    for v in versions:
        body = s3.get_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
        assert not _holds(body), v["Key"]
    docs = httpx.post(f"{search_url}/_search", json={"query": {"match_all": {}}, "size": 100}).json()
    assert docs["hits"]["hits"] and SECRET not in json.dumps(docs)
    assert not any(SECRET in line for line in container.portability.export_lines(admin))
    trail = container.audit.team(admin).items
    assert AuditAction.REDACT in [e.action for e in trail]
    assert SECRET not in json.dumps([e.details for e in trail])

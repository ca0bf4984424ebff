"""Export then import into an empty store round-trips every record exactly (the team id is re-homed)."""

import json

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"


def _records(text, team_id=None):
    out = []
    for line in text.splitlines():
        obj = json.loads(line)
        if team_id:
            obj["record"]["team_id"] = team_id
        out.append(obj)
    return sorted(out, key=lambda o: (o["type"], o["record"]["id"]))


def test_export_then_import_into_an_empty_store_round_trips_exactly(api, team_a, tmp_path):
    from fastapi.testclient import TestClient

    h = team_a.headers
    ids = [
        api.post(
            "/v1/memories",
            json={
                "kind": "fact",
                "content": f"fact {i} about the build",
                "project": PROJECT,
                "tags": ["build"],
                "details": {"n": i},
            },
            headers=h,
        ).json()["id"]
        for i in range(5)
    ]
    api.post(
        f"/v1/memories/{ids[0]}/supersede",
        json={"kind": "fact", "content": "corrected fact", "project": PROJECT},
        headers=h,
    )
    api.post("/v1/relations", json={"source_id": ids[1], "predicate": "uses", "target_id": ids[2]}, headers=h)
    exported = api.get("/v1/admin/export", headers=h).text

    other = build_container(Settings(mode="local", home=tmp_path / "elsewhere"))
    try:
        team, _, secret = other.keys.create_team("restored", "me")
        with TestClient(create_app(other)) as api2:
            h2 = {"Authorization": f"Bearer {secret}"}
            report = api2.post("/v1/admin/import", content=exported, headers=h2).json()
            assert report == {"memories": 6, "relations": 2, "sessions": 0, "skipped": 0}
            again = api2.get("/v1/admin/export", headers=h2).text
            assert _records(again) == _records(exported, team_id=team.id)
            hits = api2.post("/v1/search", json={"query": "corrected fact"}, headers=h2).json()["hits"]
            assert hits and hits[0]["memory"]["content"] == "corrected fact"
            rerun = api2.post("/v1/admin/import", content=exported, headers=h2).json()
            assert rerun["skipped"] == 8 and rerun["memories"] == 0
    finally:
        other.close()


def test_a_malformed_import_line_is_refused_with_its_line_number(api, team_a):
    r = api.post(
        "/v1/admin/import",
        content=b'{"type": "memory", "record": {"id": 1}}\nnot json',
        headers=team_a.headers,
    )
    assert r.status_code == 400
    assert "line 1" in r.json()["error"]["message"]


def test_an_import_with_the_same_model_embeds_nothing_and_finds_the_memories_alike(api, team_a, tmp_path):
    from fastapi.testclient import TestClient

    from tests.integration.test_nothing_embedded_twice import CountingEmbedder

    for i in range(12):
        api.post(
            "/v1/memories",
            json={"kind": "fact", "content": f"service {i} listens on port {8000 + i}", "project": PROJECT},
            headers=team_a.headers,
        )
    exported = api.get("/v1/admin/export", headers=team_a.headers).text
    lines = [json.loads(line) for line in exported.splitlines()]
    assert all("vector" in o for o in lines if o["type"] == "memory")

    model = CountingEmbedder()
    other = build_container(Settings(mode="local", home=tmp_path / "elsewhere"), embedder=model)
    try:
        team, _, secret = other.keys.create_team("restored", "me")
        with TestClient(create_app(other)) as api2:
            h2 = {"Authorization": f"Bearer {secret}"}
            assert api2.post("/v1/admin/import", content=exported, headers=h2).json()["memories"] == 12
            assert sum(model.texts.values()) == 0
            hits = api2.post("/v1/search", json={"query": "which port does service 7 use"}, headers=h2)
            assert hits.json()["hits"][0]["memory"]["content"] == "service 7 listens on port 8007"
            assert other.reindex.check().total == 0
    finally:
        other.close()


def test_a_vector_of_another_model_is_ignored_and_the_text_embedded(api, team_a, tmp_path):
    from fastapi.testclient import TestClient

    from tests.integration.test_nothing_embedded_twice import CountingEmbedder

    api.post(
        "/v1/memories",
        json={"kind": "fact", "content": "the stub runs on 9100", "project": PROJECT},
        headers=team_a.headers,
    )
    lines = [
        json.loads(line) for line in api.get("/v1/admin/export", headers=team_a.headers).text.splitlines()
    ]
    for o in lines:
        if "vector" in o:
            o["vector"]["model"] = "some-other-model"
    model = CountingEmbedder()
    other = build_container(Settings(mode="local", home=tmp_path / "elsewhere"), embedder=model)
    try:
        _, _, secret = other.keys.create_team("restored", "me")
        with TestClient(create_app(other)) as api2:
            body = "\n".join(json.dumps(o) for o in lines)
            report = api2.post(
                "/v1/admin/import", content=body, headers={"Authorization": f"Bearer {secret}"}
            )
            assert report.json()["memories"] == 1
        assert sum(model.texts.values()) == 1
    finally:
        other.close()

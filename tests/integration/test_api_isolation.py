"""A key of one team never reads, searches, changes or deletes another team's data, on any endpoint."""

import pytest
from cairn.domain.models import KeyScope

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _remember(api, keys, content, project="github.com/acme/shop", **extra):
    body = {"kind": "fact", "content": content, "project": project, **extra}
    r = api.post("/v1/memories", json=body, headers=keys.headers)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def a_memory(api, team_a):
    return _remember(api, team_a, "The payments service listens on port 8443 behind nginx")


@pytest.fixture
def a_relation(api, team_a, a_memory):
    other = _remember(api, team_a, "nginx terminates TLS for the payments service")
    body = {"source_id": other["id"], "predicate": "relates-to", "target_id": a_memory["id"]}
    r = api.post("/v1/relations", json=body, headers=team_a.headers)
    assert r.status_code == 201, r.text
    return r.json()


def test_another_teams_key_cannot_read_update_supersede_or_delete_a_memory(api, team_b, a_memory):
    mid = a_memory["id"]
    new = {"kind": "fact", "content": "port is 9000", "project": "github.com/acme/shop"}
    attempts = [
        api.get(f"/v1/memories/{mid}", headers=team_b.headers),
        api.patch(f"/v1/memories/{mid}", json={"content": "hijacked"}, headers=team_b.headers),
        api.post(f"/v1/memories/{mid}/supersede", json=new, headers=team_b.headers),
        api.get(f"/v1/memories/{mid}/relations", headers=team_b.headers),
        api.delete(f"/v1/memories/{mid}", headers=team_b.headers),
    ]
    assert [r.status_code for r in attempts] == [404] * 5


def test_the_owning_team_still_sees_its_memory_unchanged_after_another_team_tried(
    api, team_a, team_b, a_memory
):
    api.patch(f"/v1/memories/{a_memory['id']}", json={"content": "hijacked"}, headers=team_b.headers)
    api.delete(f"/v1/memories/{a_memory['id']}", headers=team_b.headers)
    r = api.get(f"/v1/memories/{a_memory['id']}", headers=team_a.headers)
    assert r.status_code == 200
    assert r.json()["content"] == a_memory["content"]


def test_another_teams_key_sees_nothing_in_lists_or_search(api, team_b, a_memory):
    listed = api.get("/v1/memories", headers=team_b.headers).json()["items"]
    by_project = api.get("/v1/memories", params={"project": "github.com/acme/shop"}, headers=team_b.headers)
    found = api.post("/v1/search", json={"query": "payments port nginx"}, headers=team_b.headers).json()
    scoped = api.post(
        "/v1/search",
        json={"query": "payments port", "project": "github.com/acme/shop"},
        headers=team_b.headers,
    ).json()
    assert listed == [] and by_project.json()["items"] == []
    assert found["hits"] == [] and scoped["hits"] == []


def test_the_owning_team_finds_its_memory_by_search(api, team_a, a_memory):
    found = api.post("/v1/search", json={"query": "which port does payments use?"}, headers=team_a.headers)
    assert found.status_code == 200
    assert a_memory["id"] in [h["memory"]["id"] for h in found.json()["hits"]]


def test_another_teams_key_cannot_relate_to_or_unrelate_its_memories(
    api, team_a, team_b, a_memory, a_relation
):
    own = _remember(api, team_b, "beta's own fact")
    body = {"source_id": own["id"], "predicate": "relates-to", "target_id": a_memory["id"]}
    assert api.post("/v1/relations", json=body, headers=team_b.headers).status_code == 404
    assert api.delete(f"/v1/relations/{a_relation['id']}", headers=team_b.headers).status_code == 404
    rels = api.get(f"/v1/memories/{a_memory['id']}/relations", headers=team_a.headers).json()["items"]
    assert [r["id"] for r in rels] == [a_relation["id"]]


def test_another_teams_admin_cannot_list_or_revoke_its_keys(api, team_a, team_b):
    created = api.post("/v1/admin/keys", json={"member": "dev"}, headers=team_a.headers).json()
    b_keys = api.get("/v1/admin/keys", headers=team_b.headers).json()["items"]
    assert created["key"]["id"] not in [k["id"] for k in b_keys]
    assert api.delete(f"/v1/admin/keys/{created['key']['id']}", headers=team_b.headers).status_code == 404
    still = api.get("/v1/whoami", headers={"X-API-Key": created["secret"]})
    assert still.status_code == 200


def test_another_teams_export_holds_none_of_its_data(api, team_b, a_memory):
    exported = api.get("/v1/admin/export", headers=team_b.headers).text
    assert a_memory["id"] not in exported


def test_an_import_cannot_write_into_another_team(api, team_a, team_b, a_memory):
    exported = api.get("/v1/admin/export", headers=team_a.headers).text
    r = api.post("/v1/admin/import", content=exported, headers=team_b.headers)
    assert r.status_code == 200
    # the records were re-homed into team B; team A's memory is untouched and still only A's
    assert (
        api.get(f"/v1/memories/{a_memory['id']}", headers=team_a.headers).json()["team_id"] == team_a.team_id
    )


def test_personal_memories_are_seen_only_by_their_owner(api, container, team_a):
    _, colleague = container.keys.create_key(
        container.keys.authenticate(team_a.admin),
        "colleague",
        "k",
        frozenset({KeyScope.READ, KeyScope.WRITE}),
    )
    mine = _remember(api, team_a, "I prefer tabs in Makefiles", scope="personal")
    other = {"Authorization": f"Bearer {colleague}"}
    assert api.get(f"/v1/memories/{mine['id']}", headers=other).status_code == 404
    hits = api.post("/v1/search", json={"query": "tabs Makefiles"}, headers=other).json()["hits"]
    assert mine["id"] not in [h["memory"]["id"] for h in hits]

"""Authentication and bad input: refused keys, scopes, malformed and oversized requests get clear 4xx."""

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"


def _error(r):
    body = r.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    return body["error"]


def test_requests_without_a_key_are_refused_with_401(api):
    r = api.get("/v1/memories")
    assert r.status_code == 401
    assert "API key" in _error(r)["message"]


def test_an_unknown_key_is_refused(api, team_a):
    r = api.get("/v1/memories", headers={"Authorization": "Bearer cairn_not-a-real-key"})
    assert r.status_code == 401


def test_a_key_works_as_bearer_and_as_x_api_key(api, team_a):
    assert api.get("/v1/whoami", headers=team_a.headers).status_code == 200
    assert api.get("/v1/whoami", headers={"X-API-Key": team_a.admin}).status_code == 200


def test_a_revoked_key_is_refused_at_once(api, team_a):
    made = api.post("/v1/admin/keys", json={"member": "dev"}, headers=team_a.headers).json()
    headers = {"Authorization": f"Bearer {made['secret']}"}
    assert api.get("/v1/whoami", headers=headers).status_code == 200
    assert api.delete(f"/v1/admin/keys/{made['key']['id']}", headers=team_a.headers).status_code == 200
    r = api.get("/v1/whoami", headers=headers)
    assert r.status_code == 401 and "revoked" in _error(r)["message"]


def test_an_expired_key_is_refused(api, container, team_a):
    from dataclasses import replace
    from datetime import timedelta

    made = api.post(
        "/v1/admin/keys", json={"member": "dev", "expires_in_days": 1}, headers=team_a.headers
    ).json()
    key = container.teams.get_key(team_a.team_id, made["key"]["id"])
    container.teams.put_key(replace(key, expires_at=key.created_at - timedelta(seconds=1)))
    r = api.get("/v1/whoami", headers={"Authorization": f"Bearer {made['secret']}"})
    assert r.status_code == 401 and "expired" in _error(r)["message"]


def test_keys_are_stored_only_as_hashes(api, container, team_a):
    made = api.post("/v1/admin/keys", json={"member": "dev"}, headers=team_a.headers).json()
    stored = container.teams.get_key(team_a.team_id, made["key"]["id"])
    assert made["secret"] not in repr(stored)
    assert "key_hash" not in made["key"]
    raw = container.settings.db_path.read_bytes()
    assert made["secret"].encode() not in raw


def test_a_read_only_key_cannot_write_and_a_non_admin_cannot_manage_keys(api, team_a):
    ro = api.post("/v1/admin/keys", json={"member": "bot", "scopes": ["read"]}, headers=team_a.headers).json()
    headers = {"Authorization": f"Bearer {ro['secret']}"}
    r = api.post("/v1/memories", json={"kind": "fact", "content": "x", "project": PROJECT}, headers=headers)
    assert r.status_code == 403
    assert api.get("/v1/admin/keys", headers=headers).status_code == 403
    assert api.get("/v1/memories", headers=headers).status_code == 200


def test_malformed_json_gets_400_with_a_clear_message(api, team_a):
    r = api.post(
        "/v1/memories",
        content=b'{"kind": "fact", "content": ',
        headers={**team_a.headers, "Content-Type": "application/json"},
    )
    assert r.status_code == 400
    assert "not valid JSON" in _error(r)["message"]


def test_unknown_fields_are_refused(api, team_a):
    body = {"kind": "fact", "content": "x", "project": PROJECT, "colour": "blue"}
    r = api.post("/v1/memories", json=body, headers=team_a.headers)
    assert r.status_code == 422
    assert "colour" in _error(r)["message"] and "unknown field" in _error(r)["message"]


def test_an_unknown_kind_is_refused(api, team_a):
    r = api.post(
        "/v1/memories", json={"kind": "gossip", "content": "x", "project": PROJECT}, headers=team_a.headers
    )
    assert r.status_code == 422


def test_oversized_bodies_get_413_before_being_read(api, team_a):
    big = "x" * (2 * 1024 * 1024)
    r = api.post(
        "/v1/memories", json={"kind": "fact", "content": big, "project": PROJECT}, headers=team_a.headers
    )
    assert r.status_code == 413
    assert "larger than" in _error(r)["message"]


def test_content_over_the_limit_is_refused_with_422(api, team_a):
    r = api.post(
        "/v1/memories",
        json={"kind": "fact", "content": "y" * 20_001, "project": PROJECT},
        headers=team_a.headers,
    )
    assert r.status_code == 422


@pytest.mark.parametrize(
    "bad_id", ["nope", "mem_../../etc", "mem_" + "z" * 200, "key_01jabcdefghjkmnpqrstvwxyz0"]
)
def test_bad_ids_get_a_4xx_not_a_500(api, team_a, bad_id):
    r = api.get(f"/v1/memories/{bad_id}", headers=team_a.headers)
    assert 400 <= r.status_code < 500
    _error(r)


def test_empty_and_huge_queries_are_refused(api, team_a):
    assert api.post("/v1/search", json={"query": "   "}, headers=team_a.headers).status_code == 422
    assert api.post("/v1/search", json={"query": "q" * 2001}, headers=team_a.headers).status_code == 422


@pytest.mark.parametrize(
    "query", ["what port?", '"unbalanced', "AND OR NOT", "*", "(", "col:val", "naïve ☃ 🚀", "-x", "a" * 2000]
)
def test_hostile_queries_never_break_search(api, team_a, query):
    api.post(
        "/v1/memories",
        json={"kind": "fact", "content": "the api port is 8080", "project": PROJECT},
        headers=team_a.headers,
    )
    r = api.post("/v1/search", json={"query": query}, headers=team_a.headers)
    assert r.status_code == 200, r.text


def test_an_unknown_route_gets_a_json_404(api):
    r = api.get("/v1/nothing-here")
    assert r.status_code == 404
    _error(r)


def test_an_identical_memory_is_not_stored_twice(api, team_a):
    body = {"kind": "preference", "content": "Use   pnpm, not npm", "project": PROJECT}
    first = api.post("/v1/memories", json=body, headers=team_a.headers).json()
    second = api.post(
        "/v1/memories", json={**body, "content": "use pnpm, NOT npm"}, headers=team_a.headers
    ).json()
    assert first["id"] == second["id"]


def test_superseding_keeps_the_old_memory_in_history(api, team_a):
    old = api.post(
        "/v1/memories",
        json={"kind": "decision", "content": "We deploy with Heroku", "project": PROJECT},
        headers=team_a.headers,
    ).json()
    r = api.post(
        f"/v1/memories/{old['id']}/supersede",
        json={"kind": "decision", "content": "We deploy with AWS CDK", "project": PROJECT},
        headers=team_a.headers,
    )
    assert r.status_code == 201
    new = r.json()["memory"]
    closed = api.get(f"/v1/memories/{old['id']}", headers=team_a.headers).json()
    assert closed["superseded_by"] == new["id"] and closed["valid_to"]
    current = api.get("/v1/memories", params={"project": PROJECT}, headers=team_a.headers).json()["items"]
    history = api.get(
        "/v1/memories", params={"project": PROJECT, "include_superseded": True}, headers=team_a.headers
    ).json()["items"]
    assert [m["id"] for m in current] == [new["id"]]
    assert {m["id"] for m in history} == {new["id"], old["id"]}
    hits = api.post("/v1/search", json={"query": "how do we deploy"}, headers=team_a.headers).json()["hits"]
    assert old["id"] not in [h["memory"]["id"] for h in hits]

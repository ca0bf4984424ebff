"""Contract of TeamRepository (teams and their members' API keys), run over every `stores` adapter."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.errors import Conflict, NotFound
from cairn.domain.ids import new_id
from cairn.domain.models import ApiKey, KeyScope, Team

pytestmark = pytest.mark.contract

TEAM_A = "team-a"
TEAM_B = "team-b"
BASE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def api_key(team_id: str = TEAM_A, minute: int = 0, **fields) -> ApiKey:
    fields.setdefault("member", "alice")
    fields.setdefault("name", "laptop")
    fields.setdefault("key_hash", new_id("hash"))
    fields.setdefault("prefix", "cairn_ab")
    fields.setdefault("scopes", frozenset({KeyScope.WRITE}))
    fields.setdefault("created_at", BASE + timedelta(minutes=minute))
    return ApiKey(id=fields.pop("id", new_id("key")), team_id=team_id, **fields)


def test_a_team_read_back_equals_the_team_stored(stores):
    team = Team(id=TEAM_A, name="Acme Platform", created_at=BASE + timedelta(microseconds=1))
    stores.teams.add_team(team)
    assert stores.teams.get_team(TEAM_A) == team
    assert stores.teams.get_team("team-unknown") is None


def test_adding_a_team_twice_raises_conflict(stores):
    stores.teams.add_team(Team(id=TEAM_A, name="first", created_at=BASE))
    with pytest.raises(Conflict):
        stores.teams.add_team(Team(id=TEAM_A, name="second", created_at=BASE))
    assert stores.teams.get_team(TEAM_A).name == "first"


def test_list_teams_returns_every_team(stores):
    teams = [Team(id=f"team-{i}", name=f"T{i}", created_at=BASE + timedelta(minutes=i)) for i in range(3)]
    for t in teams:
        stores.teams.add_team(t)
    assert sorted(stores.teams.list_teams(), key=lambda t: t.id) == teams


def test_a_key_read_back_equals_the_key_stored_in_every_field(stores):
    key = ApiKey(
        id=new_id("key"),
        team_id=TEAM_A,
        member="alice@example.com",
        name="ci runner",
        key_hash="a" * 64,
        prefix="cairn_x1",
        scopes=frozenset({KeyScope.READ, KeyScope.ADMIN}),
        created_at=BASE,
        expires_at=BASE + timedelta(days=90),
        revoked_at=None,
        last_used_at=BASE + timedelta(hours=5, microseconds=3),
    )
    stores.teams.add_key(key)
    assert stores.teams.get_key(TEAM_A, key.id) == key
    assert stores.teams.key_by_hash(key.key_hash) == key


def test_a_key_limited_to_projects_reads_back_with_exactly_those_projects(stores):
    limited = api_key(projects=frozenset({"github.com/acme/shop", "gitlab.com/acme/billing"}))
    nowhere = api_key(key_hash="hash-empty", projects=frozenset())
    stores.teams.add_key(limited)
    stores.teams.add_key(nowhere)
    assert stores.teams.get_key(TEAM_A, limited.id).projects == limited.projects
    assert stores.teams.key_by_hash(limited.key_hash) == limited
    assert stores.teams.get_key(TEAM_A, nowhere.id).projects == frozenset()
    assert {k.id: k.projects for k in stores.teams.list_keys(TEAM_A)}[limited.id] == limited.projects


def test_a_key_keeps_its_projects_when_its_use_is_recorded_and_when_it_is_revoked(stores):
    key = api_key(projects=frozenset({"github.com/acme/shop"}))
    stores.teams.add_key(key)
    stores.teams.touch_key(key, BASE + timedelta(hours=1))
    stores.teams.put_key(replace(stores.teams.get_key(TEAM_A, key.id), revoked_at=BASE + timedelta(hours=2)))
    assert stores.teams.get_key(TEAM_A, key.id).projects == frozenset({"github.com/acme/shop"})


def test_adding_a_key_whose_id_exists_raises_conflict(stores):
    key = api_key()
    stores.teams.add_key(key)
    with pytest.raises(Conflict):
        stores.teams.add_key(replace(key, key_hash="other-hash"))


def test_key_by_hash_finds_only_the_key_with_that_hash(stores):
    a, b = api_key(key_hash="hash-a"), api_key(key_hash="hash-b", member="bob")
    stores.teams.add_key(a)
    stores.teams.add_key(b)
    assert stores.teams.key_by_hash("hash-b") == b
    assert stores.teams.key_by_hash("hash-c") is None


def test_list_keys_returns_the_teams_keys(stores):
    keys = [api_key(minute=i, member=f"m{i}") for i in range(3)]
    for k in keys:
        stores.teams.add_key(k)
    stores.teams.add_key(api_key(team_id=TEAM_B))
    assert sorted(stores.teams.list_keys(TEAM_A), key=lambda k: k.id) == sorted(keys, key=lambda k: k.id)


def test_a_revocation_is_persisted_and_seen_by_hash_lookup(stores):
    key = api_key()
    stores.teams.add_key(key)
    revoked = replace(key, revoked_at=BASE + timedelta(days=1), last_used_at=BASE + timedelta(hours=3))
    stores.teams.put_key(revoked)
    assert stores.teams.get_key(TEAM_A, key.id) == revoked
    assert stores.teams.key_by_hash(key.key_hash) == revoked
    assert not stores.teams.key_by_hash(key.key_hash).is_active(BASE + timedelta(days=2))


def test_put_key_of_an_unknown_key_raises_not_found(stores):
    with pytest.raises(NotFound):
        stores.teams.put_key(api_key())


def test_another_team_cannot_get_or_list_a_key(stores):
    key = api_key()
    stores.teams.add_key(key)
    assert stores.teams.get_key(TEAM_B, key.id) is None
    assert stores.teams.list_keys(TEAM_B) == []


def test_put_key_with_another_team_raises_not_found_and_changes_nothing(stores):
    key = api_key()
    stores.teams.add_key(key)
    with pytest.raises(NotFound):
        stores.teams.put_key(replace(key, team_id=TEAM_B, scopes=frozenset({KeyScope.ADMIN})))
    assert stores.teams.get_key(TEAM_A, key.id) == key
    assert stores.teams.key_by_hash(key.key_hash) == key


def test_touching_a_key_sets_only_its_last_used_at(stores):
    key = api_key()
    stores.teams.add_key(key)
    used = BASE + timedelta(hours=1)
    assert stores.teams.touch_key(key, used) is True
    assert stores.teams.get_key(TEAM_A, key.id) == replace(key, last_used_at=used)


def test_touching_a_key_revoked_since_it_was_read_never_undoes_the_revocation(stores):
    key = api_key()
    stores.teams.add_key(key)
    revoked = replace(key, revoked_at=BASE + timedelta(minutes=5))
    stores.teams.put_key(revoked)
    assert stores.teams.touch_key(key, BASE + timedelta(minutes=6)) is False  # `key` is the stale read
    assert stores.teams.get_key(TEAM_A, key.id) == revoked
    assert stores.teams.touch_key(api_key(id="key_absent"), BASE) is False

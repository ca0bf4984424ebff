"""A key's last_used_at is kept on authentication, at most one write per key per minute."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteTeamRepository
from cairn.services.authorizer import authorize
from cairn.services.keys import KeyService

pytestmark = [pytest.mark.integration]

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
METHOD_ARN = "arn:aws:execute-api:eu-west-1:123456789012:api/dev/GET/v1/whoami"


class CountingTeams(SqliteTeamRepository):
    touches = 0

    def touch_key(self, key, used_at):
        self.touches += 1
        return super().touch_key(key, used_at)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def keys():
    db = SqliteDatabase(":memory:")
    teams, clock = CountingTeams(db), Clock()
    yield KeyService(teams, clock=clock), teams, clock
    db.close()


def test_authenticating_sets_last_used_at(keys):
    service, teams, clock = keys
    team, key, secret = service.create_team("alpha", "ana")
    assert teams.get_key(team.id, key.id).last_used_at is None
    clock.now = T0 + timedelta(seconds=5)
    service.authenticate(secret)
    assert teams.get_key(team.id, key.id).last_used_at == T0 + timedelta(seconds=5)


def test_a_key_used_many_times_a_minute_is_written_once_that_minute(keys):
    service, teams, clock = keys
    team, key, secret = service.create_team("alpha", "ana")
    for second in range(0, 60, 3):
        clock.now = T0 + timedelta(seconds=second)
        service.authenticate(secret)
    assert teams.touches == 1
    clock.now = T0 + timedelta(seconds=61)
    service.authenticate(secret)
    assert teams.touches == 2
    assert teams.get_key(team.id, key.id).last_used_at == T0 + timedelta(seconds=61)


def test_a_failed_bookkeeping_write_never_refuses_a_valid_key(keys):
    service, teams, _ = keys
    _, _, secret = service.create_team("alpha", "ana")

    def broken(key, used_at):
        raise OSError("disk full")

    teams.touch_key = broken  # type: ignore[method-assign]
    assert service.authenticate(secret).member == "ana"


def test_the_read_only_gateway_authorizer_never_writes(keys):
    service, teams, _ = keys
    team, key, secret = service.create_team("alpha", "ana")
    event = {"headers": {"Authorization": f"Bearer {secret}"}, "methodArn": METHOD_ARN}
    assert authorize(event, service)["context"]["team_id"] == team.id
    assert teams.touches == 0 and teams.get_key(team.id, key.id).last_used_at is None


def test_the_key_listing_shows_when_each_key_was_last_used(api, team_a):
    made = api.post("/v1/admin/keys", json={"member": "dev"}, headers=team_a.headers).json()
    listed = {k["id"]: k for k in api.get("/v1/admin/keys", headers=team_a.headers).json()["items"]}
    assert listed[made["key"]["id"]]["last_used_at"] is None
    api.get("/v1/whoami", headers={"X-API-Key": made["secret"]})
    listed = {k["id"]: k for k in api.get("/v1/admin/keys", headers=team_a.headers).json()["items"]}
    assert listed[made["key"]["id"]]["last_used_at"] is not None

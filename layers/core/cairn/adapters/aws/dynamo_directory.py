"""DynamoDB session and team repositories over the single table (key layout in dynamo_table).

A team and its API keys share the partition `<team>`, so listing a team's keys is one consistent query;
the key-hash GSI is the only way in without knowing the team, which is what authentication needs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime

from pynamodb.exceptions import PutError

from cairn.adapters.aws.dynamo_table import (
    NONE,
    DynamoTable,
    condition_failed,
    decode_cursor,
    dumps,
    encode_cursor,
    merged_newest_first,
    ts_key,
)
from cairn.domain.codec import (
    decode_key,
    decode_session,
    decode_team,
    encode_key,
    encode_session,
    encode_team,
)
from cairn.domain.errors import Conflict, NotFound
from cairn.domain.models import ApiKey, Page, Session, Team

SESSION_SK = "S"
TEAM_SK = "TEAM"
KEY_SK = "KEY#"
TEAMS_PARTITION = "TEAMS"
UPDATE_ATTEMPTS = 20


class DynamoSessionRepository:
    def __init__(self, table: DynamoTable, page_size: int = 100) -> None:
        self._t = table
        self._page_size = page_size

    def put(self, session: Session) -> None:
        self._item(session).save()

    def get(self, team_id: str, session_id: str) -> Session | None:
        data = self._stored_data(team_id, session_id)
        return None if data is None else decode_session(json.loads(data))

    def update(
        self, team_id: str, session_id: str, change: Callable[[Session | None], Session | None]
    ) -> Session | None:
        # optimistic: the write is conditional on the item being exactly what `change` saw
        for _ in range(UPDATE_ATTEMPTS):
            seen = self._stored_data(team_id, session_id)
            updated = change(None if seen is None else decode_session(json.loads(seen)))
            if updated is None:
                return None
            item = self._item(updated)
            unchanged = self._t.item.pk.does_not_exist() if seen is None else self._t.item.data == seen
            try:
                item.save(condition=unchanged)
            except PutError as exc:
                if condition_failed(exc):
                    continue
                raise
            return updated
        raise Conflict("the session kept changing while it was being updated", id=session_id)

    def _stored_data(self, team_id: str, session_id: str) -> str | None:
        try:
            return self._t.item.get(f"{team_id}#S#{session_id}", SESSION_SK, consistent_read=True).data
        except self._t.item.DoesNotExist:
            return None

    def _item(self, session: Session):
        t, order = session.team_id, f"{ts_key(session.updated_at)}#{session.id}"
        return self._t.item(
            f"{t}#S#{session.id}",
            SESSION_SK,
            type="session",
            team_id=t,
            data=dumps(encode_session(session)),
            gsi1pk=f"{t}#SESS",
            gsi1sk=order,
            gsi2pk=f"{t}#SP#{session.project or NONE}",
            gsi2sk=order,
        )

    def list(
        self, team_id: str, project: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> Page[Session]:
        stream = ("gsi1", f"{team_id}#SESS") if project is None else ("gsi2", f"{team_id}#SP#{project}")
        items: list[Session] = []
        last_key = None
        for item in merged_newest_first(self._t, [stream], decode_cursor(cursor), self._page_size):
            if len(items) == limit:
                return Page(tuple(items), encode_cursor(last_key))
            s = decode_session(json.loads(item.data))
            items.append(s)
            last_key = f"{ts_key(s.updated_at)}#{s.id}"
        return Page(tuple(items), None)

    def iter_team(self, team_id: str) -> Iterator[Session]:
        for item in merged_newest_first(self._t, [("gsi1", f"{team_id}#SESS")], None, self._page_size):
            yield decode_session(json.loads(item.data))


class DynamoTeamRepository:
    def __init__(self, table: DynamoTable) -> None:
        self._t = table

    def add_team(self, team: Team) -> None:
        item = self._t.item(
            team.id,
            TEAM_SK,
            type="team",
            team_id=team.id,
            data=dumps(encode_team(team)),
            gsi1pk=TEAMS_PARTITION,
            gsi1sk=team.id,
        )
        self._save_new(item, "team", team.id)

    def get_team(self, team_id: str) -> Team | None:
        try:
            item = self._t.item.get(team_id, TEAM_SK, consistent_read=True)
        except self._t.item.DoesNotExist:
            return None
        return decode_team(json.loads(item.data))

    def list_teams(self) -> list[Team]:
        teams = [decode_team(json.loads(i.data)) for i in self._t.item.gsi1.query(TEAMS_PARTITION)]
        return sorted(teams, key=lambda t: (t.created_at, t.id))

    def add_key(self, key: ApiKey) -> None:
        self._save_new(self._key_item(key), "api key", key.id)

    def put_key(self, key: ApiKey) -> None:
        try:
            self._key_item(key).save(condition=self._t.item.pk.exists())
        except PutError as exc:
            if condition_failed(exc):
                raise NotFound("api key not found", id=key.id) from None
            raise

    def touch_key(self, key: ApiKey, used_at: datetime) -> bool:
        try:
            item = self._t.item.get(key.team_id, f"{KEY_SK}{key.id}", consistent_read=True)
        except self._t.item.DoesNotExist:
            return False
        if decode_key(json.loads(item.data)) != key:
            return False
        touched = self._key_item(replace(key, last_used_at=used_at))
        try:  # the record exactly as read: a revocation saved meanwhile fails the condition
            touched.save(condition=self._t.item.data == item.data)
        except PutError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        for item in self._t.item.gsi1.query(f"KEY#{key_hash}"):
            return decode_key(json.loads(item.data))
        return None

    def get_key(self, team_id: str, key_id: str) -> ApiKey | None:
        try:
            item = self._t.item.get(team_id, f"{KEY_SK}{key_id}", consistent_read=True)
        except self._t.item.DoesNotExist:
            return None
        return decode_key(json.loads(item.data))

    def list_keys(self, team_id: str) -> list[ApiKey]:
        items = self._t.item.query(team_id, self._t.item.sk.startswith(KEY_SK), consistent_read=True)
        return sorted((decode_key(json.loads(i.data)) for i in items), key=lambda k: (k.created_at, k.id))

    def _key_item(self, key: ApiKey):
        return self._t.item(
            key.team_id,
            f"{KEY_SK}{key.id}",
            type="api-key",
            team_id=key.team_id,
            data=dumps(encode_key(key)),
            gsi1pk=f"KEY#{key.key_hash}",
            gsi1sk="KEY",
        )

    def _save_new(self, item, what: str, ident: str) -> None:
        try:
            item.save(condition=self._t.item.pk.does_not_exist())
        except PutError as exc:
            if condition_failed(exc):
                raise Conflict(f"{what} already exists", id=ident) from None
            raise

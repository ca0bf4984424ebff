"""Idempotency records for pipeline stages: one conditional put decides which run does the work.

A stage claims `(team, key)` (e.g. `<session>:<stage>`) before working. The claim is a lease: it expires
after `ttl_s`, so a run that crashed without releasing does not block retries forever. A completed record
keeps the stage's small result until its own expiry, so a duplicate upload or a Step Functions retry
gets the earlier answer instead of doing the work twice. DynamoDB TTL deletes records some time after
`expires_at_epoch`; until then the condition treats an expired record as absent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pynamodb.exceptions import PutError, UpdateError

from cairn.adapters.aws.dynamo_table import DynamoTable, condition_failed, dumps
from cairn.domain.errors import NotFound

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
DEFAULT_KEEP_S = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    status: str
    expires_at_epoch: int
    result: dict[str, Any] | None = None


class DynamoIdempotencyStore:
    def __init__(self, table: DynamoTable, clock: Callable[[], float] = time.time) -> None:
        self._t = table
        self._clock = clock

    @staticmethod
    def _pk(team_id: str, key: str) -> str:
        return f"{team_id}#I#{key}"

    def claim(self, team_id: str, key: str, ttl_s: int) -> bool:
        """True if this caller now holds the key; False while another run holds it or it is completed."""
        now = int(self._clock())
        item_cls = self._t.item
        item = item_cls(
            self._pk(team_id, key),
            "I",
            type="idempotency",
            team_id=team_id,
            status=IN_PROGRESS,
            expires_at_epoch=now + ttl_s,
        )
        try:
            item.save(condition=item_cls.pk.does_not_exist() | (item_cls.expires_at_epoch <= now))
        except PutError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    def complete(
        self, team_id: str, key: str, result: dict[str, Any] | None = None, keep_s: int = DEFAULT_KEEP_S
    ) -> None:
        """Mark the claimed key done, keeping `result` (small, JSON-safe) for `keep_s` seconds."""
        item_cls = self._t.item
        actions = [
            item_cls.status.set(COMPLETED),
            item_cls.expires_at_epoch.set(int(self._clock()) + keep_s),
            item_cls.data.set(dumps(result)) if result is not None else item_cls.data.remove(),
        ]
        try:
            item_cls(self._pk(team_id, key), "I").update(actions=actions, condition=item_cls.pk.exists())
        except UpdateError as exc:
            if condition_failed(exc):
                raise NotFound("idempotency key was never claimed", key=key) from None
            raise

    def release(self, team_id: str, key: str) -> None:
        """Give the key up after a failure so the next retry can claim it at once."""
        self._t.item(self._pk(team_id, key), "I").delete()

    def get(self, team_id: str, key: str) -> IdempotencyRecord | None:
        """The live record, or None if there is none or it has expired."""
        try:
            item = self._t.item.get(self._pk(team_id, key), "I", consistent_read=True)
        except self._t.item.DoesNotExist:
            return None
        expires = int(item.expires_at_epoch or 0)
        if expires <= self._clock():
            return None
        return IdempotencyRecord(item.status or "", expires, json.loads(item.data) if item.data else None)

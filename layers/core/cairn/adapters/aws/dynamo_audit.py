"""DynamoDB adapter of the AuditLog port, in the single table (layout in dynamo_table).

    audit entry  T#AUD#<target>  A#<at>#<id>  T#AUDIT / <at>#<id>

An entry's partition is its target, so a memory's or key's history is one query; the team's whole trail
is gsi1, newest first. No `expires_at_epoch`: the trail is kept as long as the data it describes. The
stream indexer passes these items by (their sort key is not a memory's).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cairn.adapters.aws.dynamo_table import (
    DynamoTable,
    decode_cursor,
    dumps,
    encode_cursor,
    newest_first,
    ts_key,
)
from cairn.domain.audit import AuditEntry, decode_entry, encode_entry
from cairn.domain.errors import InvalidInput
from cairn.domain.models import Page


class DynamoAuditLog:
    def __init__(self, table: DynamoTable, page_size: int = 100) -> None:
        self._t = table
        self._page_size = page_size

    def record(self, entries: Sequence[AuditEntry]) -> None:
        """One BatchWriteItem per 25 entries (a pipeline run writes dozens at once); an entry's key holds
        its unique id, so writing the same entry again (a retried Lambda) leaves one, unchanged."""
        if len(entries) == 1:
            self._item(entries[0]).save()
            return
        with self._t.item.batch_write() as batch:
            for entry in entries:
                batch.save(self._item(entry))

    def _item(self, entry: AuditEntry):
        order = f"{ts_key(entry.at)}#{entry.id}"
        return self._t.item(
            f"{entry.team_id}#AUD#{entry.target}",
            f"A#{order}",
            type="audit",
            team_id=entry.team_id,
            data=dumps(encode_entry(entry)),
            gsi1pk=f"{entry.team_id}#AUDIT",
            gsi1sk=order,
        )

    def for_target(self, team_id: str, target: str, limit: int = 100) -> list[AuditEntry]:
        _check_limit(limit)
        items = self._t.item.query(
            f"{team_id}#AUD#{target}",
            self._t.item.sk.startswith("A#"),
            scan_index_forward=False,
            limit=limit,
            page_size=min(limit, self._page_size),
        )
        return [decode_entry(json.loads(item.data)) for item in items]

    def list(self, team_id: str, limit: int = 50, cursor: str | None = None) -> Page[AuditEntry]:
        _check_limit(limit)
        entries: list[AuditEntry] = []
        partition = f"{team_id}#AUDIT"
        for item in newest_first(self._t, "gsi1", partition, decode_cursor(cursor), self._page_size):
            if len(entries) == limit:
                last = entries[-1]
                return Page(tuple(entries), encode_cursor(f"{ts_key(last.at)}#{last.id}"))
            entries.append(decode_entry(json.loads(item.data)))
        return Page(tuple(entries), None)


def _check_limit(limit: int) -> None:
    if limit < 1:
        raise InvalidInput("limit must be at least 1", limit=limit)

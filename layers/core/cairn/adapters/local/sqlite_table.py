"""What the SQLite repositories share: timestamps as sortable integers, compact JSON records, pagination.

Every table keeps the full record as codec JSON in `data`, plus copies of the fields queries filter or
sort on as real, indexed columns; the JSON is the truth and the columns are derived from it on every
write. Rows are keyed by (team_id, id) and every statement names team_id, so no argument can reach
another team's rows. Timestamps used for ordering are stored as integer microseconds since the epoch,
because ISO strings do not sort reliably when microseconds are omitted.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

from cairn.domain.errors import InvalidInput
from cairn.domain.models import Page

BATCH = 500  # rows per round trip when iterating a whole team


def us(value: datetime) -> int:
    """Microseconds since the epoch: an exact, sortable integer for a datetime."""
    delta = value.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), sort_keys=True)


def encode_cursor(sort_us: int, row_id: str) -> str:
    raw = json.dumps([sort_us, row_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        sort_us, row_id = json.loads(raw)
        if not isinstance(sort_us, int) or not isinstance(row_id, str):
            raise ValueError("wrong types")
        return sort_us, row_id
    except (ValueError, TypeError) as exc:
        raise InvalidInput("malformed pagination cursor") from exc


def check_limit(limit: int) -> None:
    if limit < 1:
        raise InvalidInput("limit must be at least 1", limit=limit)


def page_of(rows: list[sqlite3.Row], limit: int, sort_column: str, decode, raw: bool = False) -> Page[Any]:
    """Rows were fetched with limit + 1, so an extra row means there is a next page; `decode` takes the
    record's JSON, or with `raw` the whole row."""
    items = tuple(decode(r) if raw else decode(json.loads(r["data"])) for r in rows[:limit])
    if len(rows) <= limit:
        return Page(items=items)
    last = rows[limit - 1]
    return Page(items=items, next_cursor=encode_cursor(last[sort_column], last["id"]))

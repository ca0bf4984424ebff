"""The DynamoDB single table: its item model, key layout, runtime binding and a create helper.

Every item has string keys `pk`/`sk` and up to five overloaded GSIs (`gsi1`..`gsi5`, keys `gsiNpk`/`gsiNsk`,
all projecting ALL so a query never needs a second read). Every team-owned partition key, in the table and
in the GSIs, starts with the team id; only the team directory (`TEAMS`) and the key-hash lookup (`KEY#`)
are global, because they are what finds a team in the first place.

    item         pk              sk          gsi1pk / gsi1sk           other GSIs (pk / sk)
    memory       T#M#<id>        M           T#MEM / created#id        gsi2 T#H#<home> / created#id
                                                                       gsi3 T#H#<home>#K#<kind> / created#id
                                                                       gsi4 T#SRC#<session> / created#id
                                                                       gsi5 T#HASH#<hash> / id
    relation     T#R#<id>        R           T#REL / created#id
      out edge   T#M#<source>    R>#<id>
      in edge    T#M#<target>    R<#<id>
    session      T#S#<id>        S           T#SESS / updated#id       gsi2 T#SP#<project> / updated#id
    team         T               TEAM        TEAMS / <team id>
    api key      T               KEY#<id>    KEY#<hash> / KEY
    audit entry  T#AUD#<target>  A#<at>#<id> T#AUDIT / <at>#<id>

(`T` is the team id, `home` is `TEAM` for team-global memories and `P#<project or ~>` otherwise.)
Memory/session GSI sort keys are `<UTC timestamp, fixed width>#<id>`, so "newest first" is a descending
key query and a page cursor is simply the last sort key returned.

PynamoDB binds a model to its table through a `Meta` class. It is bound here at run time by
`DynamoTable.bind`, never at import, so a table name (and a custom endpoint for moto or DynamoDB Local)
comes from whoever builds the adapters.
"""

from __future__ import annotations

import base64
import heapq
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.connection import Connection
from pynamodb.exceptions import PynamoDBException
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from cairn.domain.errors import InvalidInput

GSI_COUNT = 5
GSI_NAMES = tuple(f"gsi{n}" for n in range(1, GSI_COUNT + 1))
TTL_ATTRIBUTE = "expires_at_epoch"
NONE = "~"  # stands for "no project" inside keys; never a valid project name after normalisation


def _gsi(n: int) -> GlobalSecondaryIndex:
    meta = type("Meta", (), {"index_name": f"gsi{n}", "projection": AllProjection()})
    cls = type(
        f"Gsi{n}",
        (GlobalSecondaryIndex,),
        {
            "Meta": meta,
            f"gsi{n}pk": UnicodeAttribute(hash_key=True),
            f"gsi{n}sk": UnicodeAttribute(range_key=True),
        },
    )
    return cls()


class CairnItem(Model):
    """One item of the table, whatever it holds; `data` is the codec's JSON of the domain object."""

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    type = UnicodeAttribute()
    team_id = UnicodeAttribute(null=True)
    data = UnicodeAttribute(null=True)
    # kept outside `data` so record_access is one atomic UpdateItem and does not look like a content
    # change to the stream indexer
    access_count = NumberAttribute(null=True)
    last_accessed_at = UnicodeAttribute(null=True)
    # the model of the memory's vector in the served index, outside `data`: a stamp after a model change
    # leaves `data` alone, so the stream indexer skips it instead of indexing every memory again
    embedding_version = UnicodeAttribute(null=True)
    status = UnicodeAttribute(null=True)
    # a delivered handoff's `details.delivered_at`, mirrored so handing it over can be a conditional write
    delivered_at = UnicodeAttribute(null=True)
    expires_at_epoch = NumberAttribute(null=True)
    # an overview counter's value (dynamo_counts), changed only by atomic ADD
    tally = NumberAttribute(null=True)
    gsi1pk = UnicodeAttribute(null=True)
    gsi1sk = UnicodeAttribute(null=True)
    gsi2pk = UnicodeAttribute(null=True)
    gsi2sk = UnicodeAttribute(null=True)
    gsi3pk = UnicodeAttribute(null=True)
    gsi3sk = UnicodeAttribute(null=True)
    gsi4pk = UnicodeAttribute(null=True)
    gsi4sk = UnicodeAttribute(null=True)
    gsi5pk = UnicodeAttribute(null=True)
    gsi5sk = UnicodeAttribute(null=True)
    gsi1 = _gsi(1)
    gsi2 = _gsi(2)
    gsi3 = _gsi(3)
    gsi4 = _gsi(4)
    gsi5 = _gsi(5)


@dataclass(frozen=True, slots=True)
class DynamoTable:
    """A `CairnItem` model bound to one table (and optionally one endpoint), shared by the repositories."""

    name: str
    item: type[CairnItem]
    host: str | None = None
    region: str | None = None
    credentials: tuple[str, str] | None = None

    @classmethod
    def bind(
        cls,
        table_name: str,
        *,
        host: str | None = None,
        region: str | None = None,
        credentials: tuple[str, str] | None = None,
    ) -> DynamoTable:
        """`host` is a custom endpoint (moto, DynamoDB Local); `credentials` only for such endpoints."""
        meta: dict[str, Any] = {"table_name": table_name, "host": host}
        if region:
            meta["region"] = region
        if credentials:
            meta["aws_access_key_id"], meta["aws_secret_access_key"] = credentials
        model = type(
            f"CairnItem_{abs(hash((table_name, host, region))):x}",
            (CairnItem,),
            {"Meta": type("Meta", (), meta), "__module__": __name__},
        )
        return cls(table_name, model, host, region, credentials)

    def connection(self) -> Connection:
        """A low-level connection to the same endpoint, which PynamoDB transactions need."""
        key_id, secret = self.credentials or (None, None)
        return Connection(
            region=self.region, host=self.host, aws_access_key_id=key_id, aws_secret_access_key=secret
        )


def condition_failed(exc: PynamoDBException) -> bool:
    return getattr(exc, "cause_response_code", None) == "ConditionalCheckFailedException"


def ts_key(value: datetime) -> str:
    """Fixed-width UTC timestamp: sorts as text in time order (isoformat drops zero microseconds)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dumps(record: dict[str, Any]) -> str:
    # sorted keys: the same object always gives the same string, so the stream indexer can compare images
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def create_table(
    table_name: str, client: Any = None, *, stream: bool = True, wait: bool = True
) -> dict[str, Any]:
    """Create the table as the CDK storage construct does (on-demand, 5 GSIs, TTL, streams); tests/local."""
    if client is None:
        import boto3

        client = boto3.client("dynamodb")
    attributes = [{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")]
    gsis = []
    for name in GSI_NAMES:
        attributes += [{"AttributeName": f"{name}{part}", "AttributeType": "S"} for part in ("pk", "sk")]
        gsis.append(
            {
                "IndexName": name,
                "KeySchema": [
                    {"AttributeName": f"{name}pk", "KeyType": "HASH"},
                    {"AttributeName": f"{name}sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        )
    params: dict[str, Any] = {
        "TableName": table_name,
        "AttributeDefinitions": attributes,
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": gsis,
        "BillingMode": "PAY_PER_REQUEST",
    }
    if stream:
        # old images too: the indexer skips modifications that change no indexed content
        params["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    description = client.create_table(**params)["TableDescription"]
    if wait:
        client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1})
    client.update_time_to_live(
        TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
    )
    return description


def newest_first(
    table: DynamoTable, index: str, partition: str, before: str | None, page_size: int = 100
) -> Iterator[CairnItem]:
    """Items of one GSI partition in descending sort-key order, strictly before `before` if given."""
    sort_attr = getattr(table.item, f"{index}sk")
    condition = sort_attr < before if before is not None else None
    yield from getattr(table.item, index).query(
        partition, condition, scan_index_forward=False, page_size=page_size
    )


def merged_newest_first(
    table: DynamoTable, streams: Iterable[tuple[str, str]], before: str | None, page_size: int = 100
) -> Iterator[CairnItem]:
    """Several (index, partition) streams merged into one descending order by their GSI sort keys."""
    iterators = [
        ((getattr(item, f"{index}sk"), item) for item in newest_first(table, index, part, before, page_size))
        for index, part in streams
    ]
    seen: set[tuple[str, str]] = set()
    for _, item in heapq.merge(*iterators, key=lambda pair: pair[0], reverse=True):
        if (item.pk, item.sk) not in seen:  # the same item can sit in two streams
            seen.add((item.pk, item.sk))
            yield item


def encode_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput("cursor is not one this store returned") from exc

"""DynamoDB memory and relation repositories over the single table (key layout in dynamo_table).

A memory lives alone in its partition `<team>#M#<id>` together with the edge items of its relations, so
"relations of a memory" and "delete a memory with its relations" are strongly consistent reads of one
partition. Listings use the GSIs (eventually consistent on AWS, immediate on moto) and apply
`MemoryFilter.admits` in Python after the key query, which keeps the filter's one definition.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime

from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError
from pynamodb.transactions import TransactWrite

from cairn.adapters.aws.dynamo_table import (
    NONE,
    CairnItem,
    DynamoTable,
    condition_failed,
    decode_cursor,
    dumps,
    encode_cursor,
    merged_newest_first,
    ts_key,
)
from cairn.domain.codec import decode_memory, decode_relation, dt_out, encode_memory, encode_relation
from cairn.domain.errors import Conflict, InvalidInput, NotFound
from cairn.domain.models import Memory, MemoryCount, MemoryFilter, MemoryKind, Page, Relation, Scope

MEMORY_SK = "M"
RELATION_SK = "R"
OUT_EDGE = "R>#"
IN_EDGE = "R<#"
_ACCESS_FIELDS = ("access_count", "last_accessed_at")


def memory_pk(team_id: str, memory_id: str) -> str:
    return f"{team_id}#M#{memory_id}"


def memory_home(m: Memory) -> str:
    """Team-global memories are listed with every project, so they get one home of their own."""
    return "TEAM" if m.scope is Scope.TEAM else f"P#{m.project or NONE}"


def memory_item(table: DynamoTable, m: Memory) -> CairnItem:
    record = encode_memory(m)
    for name in _ACCESS_FIELDS:
        record.pop(name)
    t, order = m.team_id, f"{ts_key(m.created_at)}#{m.id}"
    home = f"{t}#H#{memory_home(m)}"
    item = table.item(
        memory_pk(t, m.id),
        MEMORY_SK,
        type="memory",
        team_id=t,
        data=dumps(record),
        access_count=m.access_count,
        last_accessed_at=dt_out(m.last_accessed_at),
        gsi1pk=f"{t}#MEM",
        gsi1sk=order,
        gsi2pk=home,
        gsi2sk=order,
        gsi3pk=f"{home}#K#{m.kind.value}",
        gsi3sk=order,
        gsi5pk=f"{t}#HASH#{m.content_hash}",
        gsi5sk=m.id,
    )
    delivered = m.details.get("delivered_at")
    if delivered:  # sparse: the condition of put_if_undelivered
        item.delivered_at = str(delivered)
    if m.provenance.session_id:  # sparse: only memories learned from a session are in gsi4
        item.gsi4pk, item.gsi4sk = f"{t}#SRC#{m.provenance.session_id}", order
    return item


def memory_from_item(item: CairnItem) -> Memory:
    return memory_from_image(item.data or "{}", item.access_count, item.last_accessed_at)


def memory_from_image(data: str, access_count: float | None, last_accessed_at: str | None) -> Memory:
    record = json.loads(data)
    record["access_count"] = int(access_count or 0)
    record["last_accessed_at"] = last_accessed_at
    return decode_memory(record)


class DynamoMemoryRepository:
    def __init__(self, table: DynamoTable, page_size: int = 100) -> None:
        self._t = table
        self._page_size = page_size

    def add(self, memory: Memory) -> None:
        try:
            memory_item(self._t, memory).save(condition=self._t.item.pk.does_not_exist())
        except PutError as exc:
            if condition_failed(exc):
                raise Conflict("memory already exists", id=memory.id) from None
            raise

    def add_new(self, memories: Sequence[Memory]) -> None:
        """`BulkMemoryWriter`: memories the caller found absent, in BatchWriteItem requests of 25 (an
        import of thousands: one request per 25 instead of one each; unconditional, so only for ids
        just checked to be new)."""
        with self._t.item.batch_write() as batch:
            for memory in memories:
                batch.save(memory_item(self._t, memory))

    def put(self, memory: Memory) -> None:
        try:
            memory_item(self._t, memory).save(condition=self._t.item.pk.exists())
        except PutError as exc:
            if condition_failed(exc):
                raise NotFound("memory not found", id=memory.id) from None
            raise

    def put_if_undelivered(self, memory: Memory) -> bool:
        item_cls = self._t.item
        try:
            memory_item(self._t, memory).save(
                condition=item_cls.pk.exists() & item_cls.delivered_at.does_not_exist()
            )
        except PutError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    def supersede(self, closed: Memory, replacement: Memory, relation: Relation) -> None:
        """`AtomicSupersede`: one TransactWrite, conditioned on the stored old memory being exactly the
        current copy read here; of two concurrent supersedes one wins, the other gets `Conflict`."""
        item_cls = self._t.item
        try:
            stored = item_cls.get(memory_pk(closed.team_id, closed.id), MEMORY_SK, consistent_read=True)
        except item_cls.DoesNotExist:
            raise NotFound("memory not found", id=closed.id) from None
        current = memory_from_item(stored)
        if not current.is_current:
            raise Conflict(f"memory {closed.id} is already superseded by {current.superseded_by}")
        canonical, *edges = relation_items(self._t, relation)
        try:
            with TransactWrite(connection=self._t.connection()) as tx:
                # the old memory as read: any write in between (another supersede above all) fails it
                tx.save(memory_item(self._t, closed), condition=item_cls.data == stored.data)
                tx.save(memory_item(self._t, replacement), condition=item_cls.pk.does_not_exist())
                tx.save(canonical, condition=item_cls.pk.does_not_exist())
                for edge in edges:
                    tx.save(edge)
        except TransactWriteError as exc:
            reasons = [getattr(r, "code", None) for r in (exc.cancellation_reasons or []) if r]
            if "ConditionalCheckFailed" in reasons:
                raise Conflict(f"memory {closed.id} was changed or superseded meanwhile; retry") from None
            raise

    def get(self, team_id: str, memory_id: str) -> Memory | None:
        try:
            item = self._t.item.get(memory_pk(team_id, memory_id), MEMORY_SK, consistent_read=True)
        except self._t.item.DoesNotExist:
            return None
        return memory_from_item(item)

    def get_many(self, team_id: str, memory_ids: Sequence[str]) -> dict[str, Memory]:
        keys = [(memory_pk(team_id, i), MEMORY_SK) for i in dict.fromkeys(memory_ids)]
        found = (memory_from_item(item) for item in self._t.item.batch_get(keys, consistent_read=True))
        return {m.id: m for m in found if m.team_id == team_id}

    def delete(self, team_id: str, memory_id: str) -> bool:
        pk = memory_pk(team_id, memory_id)
        partition = list(self._t.item.query(pk, consistent_read=True))
        if not any(i.sk == MEMORY_SK for i in partition):
            return False
        relations = [decode_relation(json.loads(i.data)) for i in partition if i.sk.startswith(RELATION_SK)]
        with self._t.item.batch_write() as batch:
            for r in {r.id: r for r in relations}.values():
                for key in relation_keys(r):
                    batch.delete(self._t.item(*key))
            batch.delete(self._t.item(pk, MEMORY_SK))
        return True

    def counts(self, team_id: str, flt: MemoryFilter) -> list[MemoryCount]:
        """Counted over the same pages `list` reads (DynamoDB has no GROUP BY)."""
        tally: Counter[tuple[str | None, Scope, MemoryKind]] = Counter()
        cursor: str | None = None
        while True:
            page = self.list(team_id, flt, 500, cursor)
            tally.update((m.project, m.scope, m.kind) for m in page.items)
            cursor = page.next_cursor
            if not cursor:
                return [MemoryCount(p, sc, k, n) for (p, sc, k), n in tally.items()]

    def list(
        self, team_id: str, flt: MemoryFilter, limit: int = 50, cursor: str | None = None
    ) -> Page[Memory]:
        items: list[Memory] = []
        last_key = None
        for item in merged_newest_first(
            self._t, self._streams(team_id, flt), decode_cursor(cursor), self._page_size
        ):
            m = memory_from_item(item)
            if m.team_id != team_id or not flt.admits(m):
                continue
            if len(items) == limit:  # one more admitted item exists: there is a next page
                return Page(tuple(items), encode_cursor(last_key))
            items.append(m)
            last_key = f"{ts_key(m.created_at)}#{m.id}"
        return Page(tuple(items), None)

    def _streams(self, team_id: str, flt: MemoryFilter) -> list[tuple[str, str]]:
        """The GSI partitions that together hold every memory the filter can admit."""
        if flt.session_id:
            return [("gsi4", f"{team_id}#SRC#{flt.session_id}")]
        if flt.project is None:
            return [("gsi1", f"{team_id}#MEM")]
        homes = []
        if flt.scopes is None or flt.scopes & {Scope.PROJECT, Scope.PERSONAL}:
            homes.append(f"{team_id}#H#P#{flt.project}")
        # team-global memories are admitted for their own project even without include_team_scope
        if flt.scopes is None or Scope.TEAM in flt.scopes:
            homes.append(f"{team_id}#H#TEAM")
        if not flt.kinds:
            return [("gsi2", home) for home in homes]
        kinds = sorted(MemoryKind(k).value for k in flt.kinds)
        return [("gsi3", f"{home}#K#{kind}") for home in homes for kind in kinds]

    def find_by_hash(self, team_id: str, project: str | None, content_hash: str) -> Memory | None:
        matches = [
            memory_from_item(item) for item in self._t.item.gsi5.query(f"{team_id}#HASH#{content_hash}")
        ]
        current = [m for m in matches if m.project == project and m.is_current and m.team_id == team_id]
        return max(current, key=lambda m: (m.created_at, m.id), default=None)

    def record_access(self, team_id: str, memory_ids: Sequence[str], at: datetime) -> None:
        item_cls = self._t.item
        for memory_id in dict.fromkeys(memory_ids):
            try:
                item_cls(memory_pk(team_id, memory_id), MEMORY_SK).update(
                    actions=[item_cls.access_count.add(1), item_cls.last_accessed_at.set(dt_out(at))],
                    condition=item_cls.pk.exists(),
                )
            except UpdateError as exc:
                if not condition_failed(exc):  # unknown ids are ignored, other failures are not
                    raise

    def iter_team(self, team_id: str) -> Iterator[Memory]:
        for item in merged_newest_first(self._t, [("gsi1", f"{team_id}#MEM")], None, self._page_size):
            yield memory_from_item(item)


def relation_keys(r: Relation) -> list[tuple[str, str]]:
    """The canonical item and the two edge items that make up one relation."""
    return [
        (f"{r.team_id}#R#{r.id}", RELATION_SK),
        (memory_pk(r.team_id, r.source_id), f"{OUT_EDGE}{r.id}"),
        (memory_pk(r.team_id, r.target_id), f"{IN_EDGE}{r.id}"),
    ]


def relation_items(table: DynamoTable, relation: Relation) -> list[CairnItem]:
    """The canonical item of a relation, then its out- and in-edge items in the memories' partitions."""
    data = dumps(encode_relation(relation))
    canonical, out_edge, in_edge = relation_keys(relation)
    item_cls = table.item
    return [
        item_cls(
            *canonical,
            type="relation",
            team_id=relation.team_id,
            data=data,
            gsi1pk=f"{relation.team_id}#REL",
            gsi1sk=f"{ts_key(relation.created_at)}#{relation.id}",
        ),
        item_cls(*out_edge, type="relation-edge", team_id=relation.team_id, data=data),
        item_cls(*in_edge, type="relation-edge", team_id=relation.team_id, data=data),
    ]


class DynamoRelationRepository:
    def __init__(self, table: DynamoTable, page_size: int = 100) -> None:
        self._t = table
        self._page_size = page_size

    def add_new(self, relations: Sequence[Relation]) -> set[str]:
        """`BulkRelationWriter`: the relations whose id is not stored yet, their three items each in
        BatchWriteItem requests (an import of thousands; one TransactWrite each is ~100x the requests);
        returns the ids added. Unconditional: a relation added meanwhile under the same id is the same
        record from the same export."""
        if not relations:
            return set()
        team_id = relations[0].team_id
        keys = [(f"{team_id}#R#{r.id}", RELATION_SK) for r in relations]
        stored = {item.pk.rpartition("#R#")[2] for item in self._t.item.batch_get(keys, consistent_read=True)}
        fresh = [r for r in relations if r.id not in stored and r.team_id == team_id]
        with self._t.item.batch_write() as batch:
            for relation in fresh:
                for item in relation_items(self._t, relation):
                    batch.save(item)
        return {r.id for r in fresh}

    def add(self, relation: Relation) -> None:
        item_cls = self._t.item
        items = relation_items(self._t, relation)
        # all three or none: a half-written relation would show in one direction only
        try:
            with TransactWrite(connection=self._t.connection()) as tx:
                tx.save(items[0], condition=item_cls.pk.does_not_exist())
                for item in items[1:]:
                    tx.save(item)
        except TransactWriteError as exc:
            reasons = [getattr(r, "code", None) for r in (exc.cancellation_reasons or []) if r]
            if "ConditionalCheckFailed" in reasons:
                raise Conflict("relation already exists", id=relation.id) from None
            raise

    def get(self, team_id: str, relation_id: str) -> Relation | None:
        try:
            item = self._t.item.get(f"{team_id}#R#{relation_id}", RELATION_SK, consistent_read=True)
        except self._t.item.DoesNotExist:
            return None
        return decode_relation(json.loads(item.data))

    def delete(self, team_id: str, relation_id: str) -> bool:
        relation = self.get(team_id, relation_id)
        if relation is None:
            return False
        keys = relation_keys(relation)
        try:
            self._t.item(*keys[0]).delete(condition=self._t.item.pk.exists())
        except DeleteError as exc:
            if condition_failed(exc):  # deleted concurrently
                return False
            raise
        with self._t.item.batch_write() as batch:
            for key in keys[1:]:
                batch.delete(self._t.item(*key))
        return True

    def for_memory(self, team_id: str, memory_id: str, direction: str = "both") -> list[Relation]:
        prefix = {"out": OUT_EDGE, "in": IN_EDGE, "both": RELATION_SK}.get(direction)
        if prefix is None:
            raise InvalidInput(f"direction must be out, in or both, not {direction!r}")
        items = self._t.item.query(
            memory_pk(team_id, memory_id), self._t.item.sk.startswith(prefix), consistent_read=True
        )
        found = {r.id: r for r in (decode_relation(json.loads(i.data)) for i in items)}
        return sorted(found.values(), key=lambda r: (r.created_at, r.id))

    def iter_team(self, team_id: str) -> Iterator[Relation]:
        for item in merged_newest_first(self._t, [("gsi1", f"{team_id}#REL")], None, self._page_size):
            yield decode_relation(json.loads(item.data))

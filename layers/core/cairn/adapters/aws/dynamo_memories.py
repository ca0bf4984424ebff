"""DynamoDB memory and relation repositories over the single table (key layout in dynamo_table).

A memory lives alone in its partition `<team>#M#<id>` together with the edge items of its relations, so
"relations of a memory" and "delete a memory with its relations" are strongly consistent reads of one
partition. Listings use the GSIs (eventually consistent on AWS, immediate on moto) and apply
`MemoryFilter.admits` in Python after the key query, which keeps the filter's one definition.

Every write that can change what the overview counts (`domain.counting`) is one TransactWrite of the
memory, conditioned on the copy it read, and the counters' ADDs (dynamo_counts), so `counts` reads a
handful of counter items instead of the team.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime

from pynamodb.exceptions import DeleteError, TransactWriteError
from pynamodb.transactions import TransactWrite

from cairn.adapters.aws.dynamo_counts import add_counter_updates, read_counters, seed
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
from cairn.domain.counting import count_deltas, counters_answer, counts_from_counters, merge_deltas
from cairn.domain.errors import Conflict, InvalidInput, NotFound
from cairn.domain.models import Memory, MemoryCount, MemoryFilter, MemoryKind, Page, Relation, Scope

MEMORY_SK = "M"
RELATION_SK = "R"
OUT_EDGE = "R>#"
IN_EDGE = "R<#"
_ACCESS_FIELDS = ("access_count", "last_accessed_at")
_RETRIES = 5  # a put that lost a race to another write of the same memory reads it again
_TRANSACT_MAX = 100  # DynamoDB's limit of actions in one TransactWriteItems


def memory_pk(team_id: str, memory_id: str) -> str:
    return f"{team_id}#M#{memory_id}"


_HOME_STREAMS = 8  # beyond this many projects one walk of the team's timeline reads less


def memory_home(m: Memory) -> str:
    """Team-global memories are listed with every project, so they get one home of their own."""
    return "TEAM" if m.scope is Scope.TEAM else f"P#{m.project or NONE}"


def memory_item(table: DynamoTable, m: Memory) -> CairnItem:
    record = encode_memory(m)
    for name in _ACCESS_FIELDS:
        record.pop(name)
    version = record.pop("embedding_version")
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
    if version is not None:  # sparse
        item.embedding_version = version
    delivered = m.details.get("delivered_at")
    if delivered:  # sparse: the condition of put_if_undelivered
        item.delivered_at = str(delivered)
    if m.provenance.session_id:  # sparse: only memories learned from a session are in gsi4
        item.gsi4pk, item.gsi4sk = f"{t}#SRC#{m.provenance.session_id}", order
    return item


def memory_from_item(item: CairnItem) -> Memory:
    return memory_from_image(
        item.data or "{}", item.access_count, item.last_accessed_at, item.embedding_version
    )


def memory_from_image(
    data: str,
    access_count: float | None,
    last_accessed_at: str | None,
    embedding_version: str | None = None,
) -> Memory:
    record = json.loads(data)
    record["access_count"] = int(access_count or 0)
    record["last_accessed_at"] = last_accessed_at
    # items written before the stamp had its own attribute carry it in `data`
    record["embedding_version"] = embedding_version or record.get("embedding_version")
    return decode_memory(record)


class DynamoMemoryRepository:
    def __init__(self, table: DynamoTable, page_size: int = 100) -> None:
        self._t = table
        self._page_size = page_size

    def add(self, memory: Memory) -> None:
        item_cls = self._t.item
        try:
            with TransactWrite(connection=self._t.connection()) as tx:
                tx.save(memory_item(self._t, memory), condition=item_cls.pk.does_not_exist())
                add_counter_updates(tx, self._t, memory.team_id, count_deltas(None, memory))
        except TransactWriteError as exc:
            if _cancelled_by_condition(exc):
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
        if not self._put_counted(memory, claim=False):
            raise NotFound("memory not found", id=memory.id)

    def put_if_undelivered(self, memory: Memory) -> bool:
        return self._put_counted(memory, claim=True)

    def _put_counted(self, memory: Memory, claim: bool) -> bool:
        """Overwrite a stored memory (a handoff's claim only while undelivered) together with the change it
        makes to the counters; False when there is nothing to overwrite (or the handoff was delivered)."""
        item_cls = self._t.item
        for _ in range(_RETRIES):
            stored = self._stored(memory.team_id, memory.id)
            if stored is None or (claim and stored.delivered_at is not None):
                return False
            condition = item_cls.data == stored.data
            if claim:
                condition = condition & item_cls.delivered_at.does_not_exist()
            deltas = count_deltas(memory_from_item(stored), memory)
            try:
                with TransactWrite(connection=self._t.connection()) as tx:
                    tx.save(memory_item(self._t, memory), condition=condition)
                    add_counter_updates(tx, self._t, memory.team_id, deltas)
            except TransactWriteError as exc:
                if _cancelled_by_condition(exc):
                    continue  # written meanwhile: read it again
                raise
            return True
        raise Conflict(f"memory {memory.id} keeps changing; retry")

    def _stored(self, team_id: str, memory_id: str) -> CairnItem | None:
        try:
            return self._t.item.get(memory_pk(team_id, memory_id), MEMORY_SK, consistent_read=True)
        except self._t.item.DoesNotExist:
            return None

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
                deltas = merge_deltas(count_deltas(current, closed), count_deltas(None, replacement))
                add_counter_updates(tx, self._t, closed.team_id, deltas)
        except TransactWriteError as exc:
            if _cancelled_by_condition(exc):
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
        item_cls = self._t.item
        for _ in range(_RETRIES):
            partition = list(item_cls.query(pk, consistent_read=True))
            stored = next((i for i in partition if i.sk == MEMORY_SK), None)
            if stored is None:
                return False
            try:
                with TransactWrite(connection=self._t.connection()) as tx:
                    tx.delete(item_cls(pk, MEMORY_SK), condition=item_cls.data == stored.data)
                    add_counter_updates(tx, self._t, team_id, count_deltas(memory_from_item(stored), None))
            except TransactWriteError as exc:
                if _cancelled_by_condition(exc):
                    continue
                raise
            relations = [
                decode_relation(json.loads(i.data)) for i in partition if i.sk.startswith(RELATION_SK)
            ]
            with item_cls.batch_write() as batch:
                for r in {r.id: r for r in relations}.values():
                    for key in relation_keys(r):
                        batch.delete(item_cls(*key))
            return True
        raise Conflict(f"memory {memory_id} keeps changing; retry")

    def counts(self, team_id: str, flt: MemoryFilter) -> list[MemoryCount]:
        """From the team's counters; a filter they cannot answer (tags, a session, superseded ones) is
        counted over the same pages `list` reads (DynamoDB has no GROUP BY)."""
        if counters_answer(flt):
            counters = read_counters(self._t, team_id)
            if counters is None:
                counters = seed(self._t, team_id, self.iter_team(team_id))
            return counts_from_counters(counters, flt)
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
        homes = []
        if flt.project is not None:
            if flt.scopes is None or flt.scopes & {Scope.PROJECT, Scope.PERSONAL}:
                homes.append(f"{team_id}#H#P#{flt.project}")
            # team-global memories are admitted for their own project even without include_team_scope
            if flt.scopes is None or Scope.TEAM in flt.scopes:
                homes.append(f"{team_id}#H#TEAM")
        elif flt.projects is not None and len(flt.projects) <= _HOME_STREAMS:
            # a key limited to a few projects reads their homes, no project's and the team's, never the
            # whole team's timeline for the page of one small project
            homes = [f"{team_id}#H#P#{p}" for p in sorted(flt.projects)]
            homes += [f"{team_id}#H#P#{NONE}", f"{team_id}#H#TEAM"]
        else:
            return [("gsi1", f"{team_id}#MEM")]
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
        """One TransactWriteItems per 100 memories (a recall's hits are one round trip, not one per hit);
        an id that no longer exists cancels its batch, which is written again without it."""
        item_cls = self._t.item
        actions = [item_cls.access_count.add(1), item_cls.last_accessed_at.set(dt_out(at))]
        self._update_existing(team_id, memory_ids, actions)

    def stamp_embedding_version(self, team_id: str, version: str) -> int:
        """`EmbeddingStamps`: every memory of the team not yet stamped with `version` is, in batches of
        100 updates of that one attribute (`data` is untouched, so the stream indexer skips them)."""
        stale = [m.id for m in self.iter_team(team_id) if m.embedding_version != version]
        self._update_existing(team_id, stale, [self._t.item.embedding_version.set(version)])
        return len(stale)

    def embedding_versions(self, team_id: str) -> dict[str | None, int]:
        counts: dict[str | None, int] = {}
        for m in self.iter_team(team_id):
            counts[m.embedding_version] = counts.get(m.embedding_version, 0) + 1
        return counts

    def _update_existing(self, team_id: str, memory_ids: Sequence[str], actions: list) -> None:
        pending = list(dict.fromkeys(memory_ids))
        while pending:
            batch, pending = pending[:_TRANSACT_MAX], pending[_TRANSACT_MAX:]
            while batch:
                gone = self._update_batch(team_id, batch, actions)
                batch = [i for n, i in enumerate(batch) if n not in gone]
                if not gone:
                    break

    def _update_batch(self, team_id: str, memory_ids: list[str], actions: list) -> set[int]:
        """The positions whose condition failed (unknown ids), or nothing when the batch was written."""
        item_cls = self._t.item
        try:
            with TransactWrite(connection=self._t.connection()) as tx:
                for memory_id in memory_ids:
                    tx.update(
                        item_cls(memory_pk(team_id, memory_id), MEMORY_SK),
                        actions=actions,
                        condition=item_cls.pk.exists(),
                    )
        except TransactWriteError as exc:
            reasons = [getattr(r, "code", None) for r in (exc.cancellation_reasons or [])]
            gone = {n for n, code in enumerate(reasons) if code == "ConditionalCheckFailed"}
            if not gone:
                raise
            return gone
        return set()

    def iter_team(self, team_id: str) -> Iterator[Memory]:
        for item in merged_newest_first(self._t, [("gsi1", f"{team_id}#MEM")], None, self._page_size):
            yield memory_from_item(item)


def _cancelled_by_condition(exc: TransactWriteError) -> bool:
    reasons = [getattr(r, "code", None) for r in (exc.cancellation_reasons or []) if r]
    return "ConditionalCheckFailed" in reasons


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

"""The overview counters of a team in DynamoDB: one item per `domain.counting` key in the partition
`<team>#CNT`, changed by ADD inside the TransactWrite that writes the memory.

A table made before the counters existed is seeded once, on the first read, from a scan of the team (the
marker item `SEEDED` says it was); a write that races that one scan can leave a counter off by one, which
the next seed-free write does not repair, so `reseed` exists for an operator.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from pynamodb.transactions import TransactWrite

from cairn.adapters.aws.dynamo_table import CairnItem, DynamoTable
from cairn.domain.counting import CountKey, count_key
from cairn.domain.models import Memory, MemoryKind, Scope

COUNTER_PREFIX = "C#"
SEEDED = "SEEDED"


def counts_pk(team_id: str) -> str:
    return f"{team_id}#CNT"


def _sk(key: CountKey) -> str:
    project, scope, kind, owner = key
    return COUNTER_PREFIX + json.dumps([project, scope.value, kind.value, owner])


def _key(sk: str) -> CountKey:
    project, scope, kind, owner = json.loads(sk.removeprefix(COUNTER_PREFIX))
    return (project, Scope(scope), MemoryKind(kind), owner)


def add_counter_updates(
    tx: TransactWrite, table: DynamoTable, team_id: str, deltas: dict[CountKey, int]
) -> None:
    """The counters' ADDs as actions of the caller's transaction (one item each; a key occurs once)."""
    item_cls = table.item
    for key, n in deltas.items():
        tx.update(
            item_cls(counts_pk(team_id), _sk(key)),
            actions=[item_cls.tally.add(n), item_cls.type.set("count"), item_cls.team_id.set(team_id)],
        )


def read_counters(table: DynamoTable, team_id: str) -> list[tuple[CountKey, int]] | None:
    """The team's counters, or None while they were never seeded."""
    items = list(table.item.query(counts_pk(team_id), consistent_read=True))
    if not any(i.sk == SEEDED for i in items):
        return None
    return [(_key(i.sk), int(i.tally or 0)) for i in items if i.sk.startswith(COUNTER_PREFIX)]


def seed(table: DynamoTable, team_id: str, memories: Iterable[Memory]) -> list[tuple[CountKey, int]]:
    """Set the counters to what a scan of the team counts, then mark them seeded."""
    tally: Counter[CountKey] = Counter(k for m in memories if (k := count_key(m)) is not None)
    item_cls: type[CairnItem] = table.item
    stale = [i.sk for i in item_cls.query(counts_pk(team_id), consistent_read=True)]
    with item_cls.batch_write() as batch:
        for sk in stale:
            if sk.startswith(COUNTER_PREFIX) and _key(sk) not in tally:
                batch.delete(item_cls(counts_pk(team_id), sk))
        for key, n in tally.items():
            batch.save(item_cls(counts_pk(team_id), _sk(key), type="count", team_id=team_id, tally=n))
        batch.save(item_cls(counts_pk(team_id), SEEDED, type="count", team_id=team_id))
    return list(tally.items())

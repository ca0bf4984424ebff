"""Supersede on DynamoDB (moto server) is one conditional TransactWrite: of two concurrent supersedes of
the same memory exactly one wins and the other gets a Conflict; a refused write leaves nothing behind."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from cairn.adapters.aws.dynamo import DynamoMemoryRepository, DynamoRelationRepository
from cairn.domain.errors import CairnError, Conflict
from cairn.domain.models import KeyScope, MemoryFilter, MemoryKind, Principal, Relation
from cairn.services.memories import MemoryService, NewMemory

from tests.contract.adapters_aws import drop_table, new_table

pytestmark = pytest.mark.integration

CALLER = Principal(team_id="tm_s", member="ana", key_id="key_1", scopes=frozenset({KeyScope.WRITE}))


def decision(text: str) -> NewMemory:
    return NewMemory(kind=MemoryKind.DECISION, content=text, project="p")


class _InterleavedTable:
    """The table, whose transactions are each sent only once both callers have read, then in turn.

    DynamoDB serialises transactions on the items they touch; moto does not (it snapshots the table and
    restores the snapshot when a transaction fails, which can undo another that committed meanwhile), so
    the test sends them in turn, after both reads: exactly the lost-update interleaving."""

    def __init__(self, table, parties: int) -> None:
        self._table = table
        self._both_read = threading.Barrier(parties)
        self._one_at_a_time = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self._table, name)

    def connection(self):
        connection = self._table.connection()
        send = connection.transact_write_items

        def transact_write_items(*args, **kwargs):
            self._both_read.wait(timeout=30)
            with self._one_at_a_time:
                return send(*args, **kwargs)

        connection.transact_write_items = transact_write_items
        return connection


@pytest.fixture
def table():
    table = new_table()
    try:
        yield table
    finally:
        drop_table(table)


@pytest.fixture
def service(table):
    return MemoryService(DynamoMemoryRepository(table), DynamoRelationRepository(table))


def _current(service: MemoryService) -> list[str]:
    return [m.content for m in service.list(CALLER, MemoryFilter(), limit=50).items if m.is_current]


def test_two_concurrent_supersedes_of_one_memory_leave_exactly_one_winner(table):
    interleaved = _InterleavedTable(table, parties=2)
    service = MemoryService(DynamoMemoryRepository(interleaved), DynamoRelationRepository(table))
    # written before the interleaving starts: a memory's add is a transaction too (with its counter)
    plain = MemoryService(DynamoMemoryRepository(table), DynamoRelationRepository(table))
    old = plain.remember(CALLER, decision("Deploy with Fabric"))
    start = threading.Barrier(2)
    won: list = []
    refused: list[CairnError] = []

    def supersede(text: str) -> None:
        start.wait()
        try:
            won.append(service.supersede(CALLER, old.id, decision(text)))
        except CairnError as exc:
            refused.append(exc)

    threads = [
        threading.Thread(target=supersede, args=(t,)) for t in ("Deploy with Ansible", "Deploy with Nix")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(won) == 1 and len(refused) == 1, (won, refused)
    # both read the old memory as current: the transaction's condition refused the second
    assert isinstance(refused[0], Conflict) and "meanwhile" in str(refused[0]), refused
    _, replacement = won[0]
    assert service.get(CALLER, old.id).superseded_by == replacement.id
    # one current memory, the winner's; the loser left no replacement and no relation behind
    assert _current(service) == [replacement.content]
    links = [r for r in service.relations_of(CALLER, old.id) if r.predicate == "supersedes"]
    assert [r.source_id for r in links] == [replacement.id]


def test_a_supersede_whose_read_copy_is_stale_is_a_conflict_and_writes_nothing(service):
    old = service.remember(CALLER, decision("Python 3.11"))
    _, first = service.supersede(CALLER, old.id, decision("Python 3.12"))
    repo = service._memories
    # what a second caller computed from its read of `old`, made before the first supersede committed
    late = replace(first, id="mem_late", content="Python 3.13")
    link = Relation(
        id="rel_late",
        team_id=CALLER.team_id,
        source_id=late.id,
        predicate="supersedes",
        target_id=old.id,
        created_at=late.created_at,
        valid_from=late.created_at,
    )
    with pytest.raises(Conflict):
        repo.supersede(replace(old, superseded_by=late.id), late, link)
    assert repo.get(CALLER.team_id, late.id) is None
    assert service.get(CALLER, old.id).superseded_by == first.id
    assert _current(service) == ["Python 3.12"]

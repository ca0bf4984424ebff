"""Access counting on DynamoDB (moto server) costs one round trip per recall, not one write per shown
memory; an id that vanished meanwhile is skipped without creating an item, and the rest still count."""

from __future__ import annotations

from datetime import UTC, datetime

import botocore.client
import pytest
from cairn.adapters.aws.dynamo import DynamoMemoryRepository
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, content_hash

from tests.contract.adapters_aws import drop_table, new_table

pytestmark = pytest.mark.integration

TEAM = "tm_access"
AT = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


@pytest.fixture
def repo():
    table = new_table()
    try:
        yield DynamoMemoryRepository(table)
    finally:
        drop_table(table)


@pytest.fixture
def calls(monkeypatch):
    """The DynamoDB operations sent, by name (pynamodb goes through botocore's client)."""
    sent: list[str] = []
    original = botocore.client.BaseClient._make_api_call

    def recording(self, operation_name, api_params):
        sent.append(operation_name)
        return original(self, operation_name, api_params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    return sent


def _memory(n: int) -> Memory:
    text = f"fact {n}"
    return Memory(
        id=f"mem_{n:03d}", team_id=TEAM, kind=MemoryKind.FACT, content=text, project="p",
        content_hash=content_hash(MemoryKind.FACT, text),
    )  # fmt: skip


def test_recording_access_to_ten_memories_is_one_transaction_not_ten_updates(repo, calls):
    for n in range(10):
        repo.add(_memory(n))
    calls.clear()
    repo.record_access(TEAM, [f"mem_{n:03d}" for n in range(10)], AT)
    assert calls == ["TransactWriteItems"]
    stored = repo.get_many(TEAM, [f"mem_{n:03d}" for n in range(10)])
    assert {m.access_count for m in stored.values()} == {1}
    assert {m.last_accessed_at for m in stored.values()} == {AT}


def test_an_unknown_id_costs_one_retry_and_creates_no_item(repo, calls):
    for n in range(3):
        repo.add(_memory(n))
    calls.clear()
    repo.record_access(TEAM, ["mem_000", "mem_gone", "mem_002", "mem_000"], AT)
    assert calls == ["TransactWriteItems", "TransactWriteItems"]
    assert repo.get(TEAM, "mem_gone") is None
    assert repo.get(TEAM, "mem_000").access_count == 1  # a repeated id counts once per recall
    assert repo.get(TEAM, "mem_001").access_count == 0
    assert repo.get(TEAM, "mem_002").access_count == 1
    assert sum(c.count for c in repo.counts(TEAM, MemoryFilter())) == 3


def test_more_than_a_transaction_holds_is_sent_in_batches_of_one_hundred(repo, calls):
    for n in range(150):
        repo.add(_memory(n))
    calls.clear()
    repo.record_access(TEAM, [f"mem_{n:03d}" for n in range(150)], AT)
    assert calls == ["TransactWriteItems", "TransactWriteItems"]
    stored = repo.get_many(TEAM, [f"mem_{n:03d}" for n in range(150)])
    assert all(m.access_count == 1 for m in stored.values())

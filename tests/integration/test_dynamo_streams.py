"""DynamoDB Streams records of the single table become index upserts and removals (moto streams)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cairn.adapters.aws.dynamo import (
    DynamoMemoryRepository,
    DynamoRelationRepository,
    DynamoSessionRepository,
)
from cairn.adapters.aws.streams import changes_from_stream_records
from cairn.domain.models import Memory, MemoryKind, Relation, Session

from tests.contract.adapters_aws import aws_client, drop_table, new_table

pytestmark = pytest.mark.integration

TEAM = "tm_a"


@pytest.fixture
def table():
    t = new_table()
    yield t
    drop_table(t)


def stream_records(table) -> list[dict]:
    """Every record of the table's stream so far, as the indexer Lambda receives them."""
    arn = aws_client("dynamodb").describe_table(TableName=table.name)["Table"]["LatestStreamArn"]
    streams = aws_client("dynamodbstreams")
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator)["Records"]
    return records


def mem(memory_id: str, content: str = "use ruff", **fields) -> Memory:
    return Memory(id=memory_id, team_id=TEAM, kind=MemoryKind.FACT, content=content, project="p", **fields)


def test_a_new_memory_becomes_an_upsert_equal_to_the_stored_memory(table):
    repo = DynamoMemoryRepository(table)
    repo.add(mem("m1"))
    upserts, removals = changes_from_stream_records(stream_records(table))
    assert upserts == [repo.get(TEAM, "m1")]
    assert removals == []


def test_a_deleted_memory_becomes_a_removal_and_its_earlier_insert_is_dropped(table):
    repo = DynamoMemoryRepository(table)
    repo.add(mem("m1"))
    repo.delete(TEAM, "m1")
    assert changes_from_stream_records(stream_records(table)) == ([], [(TEAM, "m1")])


def test_a_changed_memory_is_upserted_with_its_latest_content(table):
    repo = DynamoMemoryRepository(table)
    repo.add(mem("m1", "first"))
    repo.put(mem("m1", "second"))
    upserts, _ = changes_from_stream_records(stream_records(table))
    assert [m.content for m in upserts] == ["second"]


def test_recording_access_does_not_reindex_a_memory(table):
    repo = DynamoMemoryRepository(table)
    repo.add(mem("m1"))
    records_before = len(stream_records(table))
    repo.record_access(TEAM, ["m1"], datetime(2026, 1, 1, tzinfo=UTC))
    access_records = stream_records(table)[records_before:]
    assert access_records, "the access update itself is on the stream"
    assert changes_from_stream_records(access_records) == ([], [])


def test_relations_and_sessions_on_the_stream_are_ignored(table):
    DynamoSessionRepository(table).put(Session(id="ses_1", team_id=TEAM, project="p", agent="claude-code"))
    DynamoRelationRepository(table).add(
        Relation(id="rel_1", team_id=TEAM, source_id="m1", predicate="uses", target_id="m2")
    )
    assert changes_from_stream_records(stream_records(table)) == ([], [])


def test_a_removal_is_read_from_the_keys_when_the_old_image_is_absent():
    record = {
        "eventName": "REMOVE",
        "dynamodb": {"Keys": {"pk": {"S": "tm_a#M#mem_1"}, "sk": {"S": "M"}}},
    }
    assert changes_from_stream_records([record]) == ([], [("tm_a", "mem_1")])

"""Pipeline idempotency records on DynamoDB (moto): one claim wins, leases expire, results are kept."""

from __future__ import annotations

import pytest
from cairn.adapters.aws.dynamo import DynamoIdempotencyStore
from cairn.domain.errors import NotFound

from tests.contract.adapters_aws import drop_table, new_table

pytestmark = pytest.mark.integration


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store():
    table = new_table()
    clock = Clock()
    yield DynamoIdempotencyStore(table, clock=clock), clock
    drop_table(table)


def test_only_the_first_claim_of_a_key_wins(store):
    idem, _ = store
    assert idem.claim("tm_a", "ses_1:extract", 300)
    assert not idem.claim("tm_a", "ses_1:extract", 300)


def test_the_same_key_in_another_team_is_a_different_claim(store):
    idem, _ = store
    assert idem.claim("tm_a", "ses_1:extract", 300)
    assert idem.claim("tm_b", "ses_1:extract", 300)


def test_a_claim_left_by_a_crashed_run_can_be_taken_after_its_lease_expires(store):
    idem, clock = store
    assert idem.claim("tm_a", "k", 300)
    clock.now += 301
    assert idem.claim("tm_a", "k", 300)


def test_a_completed_key_cannot_be_claimed_and_keeps_its_result(store):
    idem, clock = store
    idem.claim("tm_a", "k", 300)
    idem.complete("tm_a", "k", {"memories": 3}, keep_s=3600)
    clock.now += 1000  # past the claim's lease, within the completed record's life
    assert not idem.claim("tm_a", "k", 300)
    record = idem.get("tm_a", "k")
    assert record is not None and record.status == "completed" and record.result == {"memories": 3}


def test_a_released_key_can_be_claimed_again_at_once(store):
    idem, _ = store
    idem.claim("tm_a", "k", 300)
    idem.release("tm_a", "k")
    assert idem.claim("tm_a", "k", 300)


def test_completing_a_key_never_claimed_is_an_error(store):
    idem, _ = store
    with pytest.raises(NotFound):
        idem.complete("tm_a", "never", None)


def test_the_record_carries_the_ttl_attribute_dynamodb_expires(store):
    idem, clock = store
    idem.claim("tm_a", "k", 300)
    assert idem.get("tm_a", "k").expires_at_epoch == int(clock.now) + 300
    clock.now += 301
    assert idem.get("tm_a", "k") is None

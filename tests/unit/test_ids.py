"""Identifiers: valid, unique, and in the order one process made them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from cairn.domain.ids import is_valid_id, new_id

pytestmark = pytest.mark.unit


def test_ids_made_in_one_burst_sort_in_the_order_they_were_made():
    # thousands fall in one millisecond: their order must still be the order of writing, because
    # ranking breaks exact ties by id and a re-ingest must answer the same way
    made = [new_id("mem") for _ in range(5_000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_ids_made_on_many_threads_are_all_distinct_and_valid():
    with ThreadPoolExecutor(max_workers=8) as pool:
        made = list(pool.map(lambda _: new_id("rel"), range(4_000)))
    assert len(set(made)) == len(made)
    assert all(is_valid_id(i, "rel") for i in made)


def test_an_id_names_what_it_identifies():
    assert is_valid_id(new_id("team"), "team")
    assert not is_valid_id(new_id("team"), "key")
    assert not is_valid_id("mem_not-an-id", "mem")

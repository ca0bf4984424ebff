"""The OpenSearch index degrades instead of failing: osmem-server (no k-NN), bad vectors, a dead engine."""

from __future__ import annotations

import socket

import pytest
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.domain.errors import Unavailable
from cairn.domain.models import IndexedMemory, Memory, MemoryFilter, MemoryKind

from tests.contract.adapters_aws import osmem_index

pytestmark = pytest.mark.integration

TEAM = "tm_a"
DIM = 4


def mem(memory_id: str, content: str) -> Memory:
    return Memory(id=memory_id, team_id=TEAM, kind=MemoryKind.FACT, content=content, project="p")


@pytest.fixture
def index():
    with osmem_index(DIM) as idx:
        idx.upsert([IndexedMemory(mem("m1", "postgres migration timed out"), (1.0, 0.0, 0.0, 0.0))])
        yield idx


def test_a_rejected_knn_leg_leaves_the_lexical_leg_and_says_why(index):
    result = index.search(TEAM, "postgres migration", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5, 5)
    assert [i for i, _ in result.lexical] == ["m1"]
    assert result.semantic == ()
    assert result.degraded and "semantic" in result.degraded and "knn" in result.degraded


def test_a_vector_only_search_the_engine_rejects_is_empty_and_degraded_not_an_error(index):
    result = index.search(TEAM, "", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5, 5)
    assert result.lexical == () and result.semantic == ()
    assert result.degraded


def test_a_query_vector_of_the_wrong_dimension_skips_the_semantic_leg(index):
    result = index.search(TEAM, "postgres", (1.0, 0.0), MemoryFilter(), 5, 5)
    assert [i for i, _ in result.lexical] == ["m1"]
    assert "dimensions" in (result.degraded or "")


def test_a_lexical_only_search_is_not_degraded(index):
    result = index.search(TEAM, "postgres", None, MemoryFilter(), 5, 5)
    assert [i for i, _ in result.lexical] == ["m1"] and result.degraded is None


def test_searching_before_anything_was_indexed_is_empty_not_degraded():
    with osmem_index(DIM) as idx:
        result = idx.search(TEAM, "anything", None, MemoryFilter(), 5, 5)
    assert result.lexical == () and result.semantic == () and result.degraded is None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_engine_raises_unavailable_for_every_operation():
    client = opensearch_client(f"http://127.0.0.1:{_closed_port()}", auth="none", timeout=1)
    client.transport.max_retries = 0
    idx = OpenSearchIndex(client, "down", DIM)
    with pytest.raises(Unavailable):
        idx.search(TEAM, "postgres", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5, 5)
    with pytest.raises(Unavailable):
        idx.upsert([IndexedMemory(mem("m1", "x"), None)])
    with pytest.raises(Unavailable):
        idx.clear_team(TEAM)


class _RejectingClient:
    """Answers every _msearch with an error per search, as an engine with a broken index would."""

    def msearch(self, body):
        count = len(body.splitlines()) // 2
        error = {"type": "search_phase_execution_exception", "reason": "all shards failed"}
        return {"responses": [{"error": error, "status": 500}] * count}


def test_a_rejected_lexical_leg_with_nothing_else_raises_unavailable_so_the_caller_can_scan():
    idx = OpenSearchIndex(_RejectingClient(), "x", DIM)  # type: ignore[arg-type]
    with pytest.raises(Unavailable):
        idx.search(TEAM, "postgres", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5, 5)

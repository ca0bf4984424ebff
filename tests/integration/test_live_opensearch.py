"""Both legs against a real OpenSearch endpoint: the k-NN bodies no local emulator can execute.

Opt-in: `CAIRN_LIVE_OPENSEARCH_URL=https://... .venv/bin/python -m pytest -m live tests/integration/
test_live_opensearch.py`. SigV4 with boto3's credentials by default (`CAIRN_LIVE_OPENSEARCH_AUTH=none` for
an unsigned cluster, `CAIRN_LIVE_OPENSEARCH_REGION` for the region). Each run uses its own index and
deletes it afterwards.
"""

from __future__ import annotations

import os
import uuid

import pytest
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.domain.models import IndexedMemory, Memory, MemoryFilter, MemoryKind, Scope

URL = os.environ.get("CAIRN_LIVE_OPENSEARCH_URL")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not URL, reason="set CAIRN_LIVE_OPENSEARCH_URL to run against a real OpenSearch"),
]

TEAM, OTHER = "tm_live_a", "tm_live_b"
DIM = 4


def mem(memory_id: str, content: str, team: str = TEAM, **fields) -> Memory:
    fields.setdefault("project", "p")
    return Memory(id=memory_id, team_id=team, kind=MemoryKind.FACT, content=content, **fields)


@pytest.fixture(scope="module")
def index():
    client = opensearch_client(
        URL,
        region=os.environ.get("CAIRN_LIVE_OPENSEARCH_REGION"),
        auth=os.environ.get("CAIRN_LIVE_OPENSEARCH_AUTH", "sigv4"),
        timeout=30,
    )
    idx = OpenSearchIndex(client, f"cairn-live-{uuid.uuid4().hex[:8]}", DIM, refresh="wait_for")
    idx.upsert(
        [
            IndexedMemory(mem("m1", "postgres migration timed out"), (1.0, 0.0, 0.0, 0.0)),
            IndexedMemory(mem("m2", "use ruff for linting"), (0.0, 1.0, 0.0, 0.0)),
            IndexedMemory(
                mem("m3", "team wide convention", scope=Scope.TEAM, project=None), (0.9, 0.1, 0, 0)
            ),
            IndexedMemory(mem("m4", "other team's secret", team=OTHER), (1.0, 0.0, 0.0, 0.0)),
        ]
    )
    yield idx
    client.indices.delete(index=idx.index, ignore_unavailable=True)
    client.indices.delete_index_template(name=idx.index)


def test_both_legs_run_in_one_msearch_without_degradation(index):
    result = index.search(TEAM, "postgres migration", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 5, 5)
    assert result.degraded is None
    assert result.lexical[0][0] == "m1"
    assert result.semantic[0][0] == "m1"


def test_the_knn_filter_keeps_other_teams_out_and_applies_the_memory_filter(index):
    result = index.search(TEAM, "", (1.0, 0.0, 0.0, 0.0), MemoryFilter(project="p"), 0, 10)
    ids = [i for i, _ in result.semantic]
    assert "m4" not in ids
    assert set(ids) == {"m1", "m2", "m3"}
    only_project = index.search(
        TEAM, "", (1.0, 0.0, 0.0, 0.0), MemoryFilter(project="p", scopes=frozenset({Scope.PROJECT})), 0, 10
    )
    assert {i for i, _ in only_project.semantic} == {"m1", "m2"}


def test_semantic_scores_are_ranked_best_first(index):
    scores = [s for _, s in index.search(TEAM, "", (1.0, 0.0, 0.0, 0.0), MemoryFilter(), 0, 10).semantic]
    assert scores == sorted(scores, reverse=True)

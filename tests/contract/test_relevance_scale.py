"""One score scale: every search index hands the relevance judge a cosine, so the same query and memory
get the same "relevant / nothing relevant" decision in local mode and on AWS.

Runs over every registered search index. An engine that executes k-NN here (SQLite) reports its own
semantic scores. OpenSearch's k-NN cannot run on any local emulator (osmem-server rejects `knn`), so for
it the engine's answer is what its documentation says it returns for our `cosinesimil` space,
`_score = (1 + cos) / 2` (k-NN docs, "Spaces"), fed through the adapter's own hit conversion
(`opensearch_bodies.knn_hits`), exactly as `OpenSearchIndex.search` does with a real response.
"""

from __future__ import annotations

import numpy as np
import pytest
from cairn.adapters.aws import opensearch_bodies as b
from cairn.adapters.aws.opensearch import OpenSearchIndex
from cairn.bootstrap import shared_embedder
from cairn.domain.models import IndexedMemory, Memory, MemoryFilter, MemoryKind
from cairn.search.analyzer import analyze
from cairn.search.relevance import FLOOR, Relevance

pytestmark = pytest.mark.contract

TEAM = "team_scale"
#: (query, memory, relevant?) — the last is a "nothing relevant" pair: unrelated texts whose cosine is low
#: but positive, which OpenSearch's raw score ((1 + cos) / 2 > 0.5) would pass as strongly relevant.
PAIRS = (
    (
        "why did the postgres migration time out during the deploy?",
        "The deploy failed because the Postgres migration timed out after 30 seconds",
        True,
    ),
    ("how do we lint the python code?", "Use ruff for linting and formatting Python code", True),
    ("what is the vacation policy over the holidays?", "Use ruff to lint and format Python code", False),
)


@pytest.fixture(scope="module")
def embedder():
    return shared_embedder()


def _semantic_cosine(index, embedder, query: str, memory: Memory) -> float:
    qv = embedder.embed_query(query)
    mv = embedder.embed([memory.search_text()])[0]
    if isinstance(index, OpenSearchIndex) and not index.supports_knn:
        # what OpenSearch answers for this pair, per its documented cosinesimil score
        cos = float(np.dot(qv, mv) / (np.linalg.norm(qv) * np.linalg.norm(mv)))
        response = {"hits": {"hits": [{"_source": {"memory_id": memory.id}, "_score": (1 + cos) / 2}]}}
        ((_, score),) = b.knn_hits(response)
        return score
    index.upsert([IndexedMemory(memory=memory, vector=tuple(float(x) for x in mv))])
    found = dict(index.search(TEAM, "", qv, MemoryFilter(), 0, 10).semantic)
    index.remove(TEAM, [memory.id])
    return found[memory.id]


def _decision(query: str, memory: Memory, cosine: float) -> bool:
    terms = set(analyze(memory.search_text()))
    return Relevance(query, [terms]).score(cosine, terms) >= FLOOR


@pytest.mark.parametrize(("query", "content", "relevant"), PAIRS, ids=["deploy", "lint", "nothing-relevant"])
def test_each_index_gives_the_judge_a_cosine_so_both_modes_decide_alike(
    search_index, embedder, query, content, relevant
):
    memory = Memory(id="m1", team_id=TEAM, kind=MemoryKind.FACT, project="proj", content=content)
    cosine = _semantic_cosine(search_index, embedder, query, memory)
    qv = np.asarray(embedder.embed_query(query))
    mv = np.asarray(embedder.embed([memory.search_text()])[0])
    exact = float(qv @ mv / (np.linalg.norm(qv) * np.linalg.norm(mv)))
    assert cosine == pytest.approx(exact, abs=0.02)  # the scale is the cosine, whatever the engine
    assert _decision(query, memory, cosine) is relevant


def test_the_nothing_relevant_pair_would_pass_on_opensearchs_raw_score(embedder):
    """Why the conversion matters: read as a cosine, an unrelated pair's raw `_score` clears the floor."""
    query, content, _ = PAIRS[-1]
    memory = Memory(id="m1", team_id=TEAM, kind=MemoryKind.FACT, project="proj", content=content)
    qv = np.asarray(embedder.embed_query(query))
    mv = np.asarray(embedder.embed([content])[0])
    cos = float(qv @ mv / (np.linalg.norm(qv) * np.linalg.norm(mv)))
    assert not _decision(query, memory, cos)
    assert _decision(query, memory, (1 + cos) / 2)

"""The distributed model-change reindex's tasks (plan, workers over manifest pages, finish) on moto
(DynamoDB, S3) and osmem-server (OpenSearch): recall keeps answering from the complete old index until the
alias swaps; writes during the build land in both indexes; a run that failed mid-way resumes without
embedding its finished pages again; every document of the new index names its model."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
from cairn.adapters.aws.dynamo import DynamoMemoryRepository, DynamoTeamRepository
from cairn.adapters.aws.dynamo_memories import memory_item
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
from cairn.adapters.aws.streams import DynamoStreamIndexer
from cairn.domain.errors import Conflict
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Team, content_hash
from cairn.services.distributed_reindex import MANIFEST_KEY, BuildMirror, DistributedReindex
from cairn.services.indexing import MemoryIndexer

from tests.contract.adapters_aws import drop_table, new_bucket, new_table, osmem_server
from tests.fakes.embedders import HashEmbedder

pytestmark = pytest.mark.integration

TEAM = "tm_dist"
OLD, NEW = HashEmbedder("model-old", 16), HashEmbedder("model-new", 12)


class CountingEmbedder(HashEmbedder):
    def __init__(self, version: str, dimension: int) -> None:
        super().__init__(version, dimension)
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def _memory(n: int) -> Memory:
    text = f"the deploy script step {n} uses rsync over ssh"
    return Memory(
        id=f"mem_{n:04d}", team_id=TEAM, kind=MemoryKind.FACT, content=text, project="p",
        content_hash=content_hash(MemoryKind.FACT, text),
    )  # fmt: skip


@pytest.fixture
def stack():
    table = new_table()
    with new_bucket() as (blobs, _, _), osmem_server().clone() as clone:
        index = OpenSearchIndex(
            opensearch_client(clone.url, auth="none"), f"t{uuid.uuid4().hex[:8]}", 16, refresh=True
        )
        index.supports_knn = False
        teams, memories = DynamoTeamRepository(table), DynamoMemoryRepository(table)
        teams.add_team(Team(TEAM, "dist", datetime(2026, 1, 1, tzinfo=UTC)))
        yield teams, memories, blobs, index, table
    drop_table(table)


def _found(index: OpenSearchIndex) -> int:
    """What a reader's recall gets from the served name (lexical: osmem has no k-NN)."""
    return len(index.search(TEAM, "deploy rsync", None, MemoryFilter(), 50, 0).lexical)


def _stream_insert(table, m: Memory) -> dict:
    image = memory_item(table, m).serialize()
    return {
        "eventName": "INSERT",
        "dynamodb": {"Keys": {"pk": image["pk"], "sk": image["sk"]}, "NewImage": image},
    }


def test_a_model_change_builds_beside_the_served_index_resumes_and_swaps_with_recall_answering_throughout(
    stack,
):
    teams, memories, blobs, index, table = stack
    first = [_memory(n) for n in range(45)]
    for m in first:
        memories.add(m)
    MemoryIndexer(index, OLD).index(first)
    assert _found(index) > 0
    builds = OpenSearchIndexBuilds(index, index.client)
    target = CountingEmbedder("model-new", 12)
    reindex = DistributedReindex(teams, memories, blobs, builds, target, page_size=10, settle_s=0)

    plan = reindex.plan()
    assert plan == {"version": "model-new", "pages": 5, "records": 45, "resumed": False}
    manifest = json.loads(blobs.get(MANIFEST_KEY))  # what the Distributed Map's ItemReader reads
    assert len(manifest) == 5 and all(item["version"] == "model-new" for item in manifest)
    for item in manifest[:2]:
        reindex.embed_page(item["page"], item["version"])
        assert _found(index) > 0
    # the first index has no `_meta`: its documents name the model it serves
    assert builds.served_version() == "model-old" and builds.building_version() == "model-new"

    # writes during the build: the stream indexer writes them to the served index and to the build
    stream = DynamoStreamIndexer(MemoryIndexer(index, OLD), index, BuildMirror(builds, NEW))
    late = _memory(900)
    memories.add(late)
    stream.apply([_stream_insert(table, late)])
    memories.delete(TEAM, first[3].id)  # embedded already: the stream's removal reaches the build
    stream.apply(
        [{"eventName": "REMOVE", "dynamodb": {"Keys": _stream_insert(table, first[3])["dynamodb"]["Keys"]}}]
    )
    memories.delete(TEAM, first[44].id)  # not embedded yet: its worker finds it gone

    with pytest.raises(Conflict):  # the run fails here (a killed worker): nothing is swapped
        reindex.finish()
    assert _found(index) > 0 and builds.building_version() == "model-new"

    embedded_before = target.texts
    assert reindex.plan()["resumed"] is True  # the run started again
    skipped = [reindex.embed_page(item["page"], item["version"])["skipped"] for item in manifest]
    assert skipped == [True, True, False, False, False]
    assert target.texts - embedded_before == 24  # the last three pages only, less the deleted memory
    status = reindex.status()
    assert (status.pages, status.pages_done, status.state) == (5, 5, "building")

    finished = reindex.finish()
    assert finished["swapped"] is True and finished["stamped"] == 44
    assert memories.embedding_versions(TEAM) == {"model-new": 44}  # the records, not only the documents
    assert builds.served_version() == "model-new" and builds.building_version() is None
    assert _found(index) > 0
    served = index.client.search(index=index.index, body={"size": 100, "query": {"match_all": {}}})["hits"][
        "hits"
    ]
    ids = {h["_source"]["memory_id"] for h in served}
    assert late.id in ids and first[3].id not in ids and first[44].id not in ids
    assert len(ids) == 44
    assert {h["_source"]["embedding_version"] for h in served} == {"model-new"}
    assert reindex.status().state == "swapped"

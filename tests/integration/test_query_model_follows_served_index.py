"""After a model change, a reader's query is embedded with the model of the index actually served, in both
modes, with no `previous` model passed by the caller (as the API, the MCP server and the CLI build theirs):
the bundled model that made the served vectors embeds queries until the rebuild swaps, the configured one
after. The served index here is the real bundled MiniLM's; the configured model is a 12-d hash model.

Locally the reader's k-NN leg is checked directly (SQLite). In AWS osmem-server has no k-NN, so the test
observes the vector recall hands to OpenSearch: its model and dimension are the served index's."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from cairn.adapters.aws import opensearch_builds
from cairn.adapters.aws.dynamo import DynamoMemoryRepository, DynamoTeamRepository
from cairn.adapters.aws.dynamo_memories import memory_item
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
from cairn.bootstrap import build_container, build_stream_indexer, shared_embedder
from cairn.domain.models import KeyScope, Memory, MemoryFilter, MemoryKind, Principal, Team, content_hash
from cairn.services.distributed_reindex import DistributedReindex
from cairn.services.indexing import MemoryIndexer
from cairn.services.memories import NewMemory
from cairn.settings import Settings

from tests.contract.adapters_aws import (
    CREDENTIALS,
    REGION,
    drop_table,
    moto_endpoint,
    new_bucket,
    new_table,
    osmem_server,
)
from tests.fakes.embedders import HashEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NEW = "hash-new-12"
FLT = MemoryFilter(project="p")
SERVED = shared_embedder().version


def _fact(i: int) -> str:
    return f"service {i} listens on port {9000 + i} in zone {i % 7}"


def test_locally_a_reader_embeds_queries_with_the_served_model_until_the_swap_then_with_the_new(tmp_path):
    settings = Settings(mode="local", home=tmp_path / "home")
    c = build_container(settings)  # the bundled model writes the store
    try:
        _, _, secret = c.keys.create_team("models", "ops")
        caller = c.keys.authenticate(secret)
        made = [
            c.memories.remember(caller, NewMemory(MemoryKind.FACT, _fact(i), project="p")) for i in range(30)
        ]
    finally:
        c.close()
    writer = build_container(settings, embedder=HashEmbedder(NEW, 12))
    reader = build_container(settings, embedder=HashEmbedder(NEW, 12), reconcile=False)
    index = reader.indexer._index
    seen: list[tuple[str, bool]] = []

    def read(m) -> None:
        who = reader.keys.authenticate(secret, record_use=False)
        answer = reader.recall.recall(who, m.content, FLT, limit=5)
        vector = reader.embedder.embed_query(m.search_text())
        knn = index.search(who.team_id, "", vector, FLT, 0, 1).semantic
        assert answer.hits and not answer.degraded, answer.degraded
        assert knn and knn[0][0] == m.id and knn[0][1] > 0.999  # the query's model is the vectors'
        seen.append((vector.version, len(vector) == 384))

    try:
        assert writer.reindex.model_change()
        read(made[0])  # before the build: the served model, not keywords only
        writer.reindex.rebuild(batch_size=10, progress=lambda n: read(made[len(seen) % 30]))
        read(made[7])
    finally:
        writer.close()
        reader.close()
    assert seen[:-1] and all(s == (SERVED, True) for s in seen[:-1])
    assert seen[-1] == (NEW, False)


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS[1])
    table = new_table()
    with new_bucket() as (blobs, bucket, _), osmem_server().clone() as clone:
        prefix = f"q{uuid.uuid4().hex[:8]}"
        settings = Settings(
            mode="aws",
            table_name=table.name,
            bucket=bucket,
            opensearch_endpoint=clone.url,
            opensearch_auth="none",
            opensearch_index_prefix=prefix,
            embedding_dim=12,  # the configured model's; the served index is still 384-d
            dynamo_endpoint=moto_endpoint(),
            aws_region=REGION,
        )
        yield settings, table, blobs, clone.url
    drop_table(table)


def _memory(n: int) -> Memory:
    text = _fact(n)
    return Memory(
        id=f"mem_{n:04d}", team_id="tm_q", kind=MemoryKind.FACT, content=text, project="p",
        content_hash=content_hash(MemoryKind.FACT, text),
    )  # fmt: skip


def test_in_aws_recall_embeds_with_the_alias_current_index_model_until_the_swap_then_with_the_new(
    aws, monkeypatch
):
    settings, table, blobs, url = aws
    teams, memories = DynamoTeamRepository(table), DynamoMemoryRepository(table)
    teams.add_team(Team("tm_q", "q", datetime(2026, 1, 1, tzinfo=UTC)))
    stored = [_memory(n) for n in range(25)]
    for m in stored:
        memories.add(m)
    served = OpenSearchIndex(
        opensearch_client(url, auth="none"), settings.opensearch_index_prefix, 384, refresh=True
    )
    served.supports_knn = False
    MemoryIndexer(served, shared_embedder()).index(stored)  # a deployment's first index: no _meta
    builds = OpenSearchIndexBuilds(served, served.client)
    new = HashEmbedder(NEW, 12)
    run = DistributedReindex(teams, memories, blobs, builds, new, page_size=10, settle_s=0)

    reader = build_container(settings, embedder=new)  # what the API builds: no `previous` passed
    asked: list[list[float]] = []
    real_search = OpenSearchIndex.search

    def observed(self, team_id, text, vector, *args):  # observe what the engine is asked, not replace it
        asked.append(vector)
        return real_search(self, team_id, text, vector, *args)

    monkeypatch.setattr(OpenSearchIndex, "search", observed)
    who = Principal("tm_q", "dev", "k", frozenset({KeyScope.READ}))

    def recall_vector(m: Memory) -> list[float]:
        answer = reader.recall.recall(who, m.content, FLT, 5)
        assert m.id in [h.memory.id for h in answer.hits]
        assert "skipped" not in (answer.degraded or "")  # the vector fits the served index
        return asked[-1]

    plan = run.plan()
    run.embed_page(f"reindex/{NEW}/pages/000000.json", NEW)
    vector = recall_vector(stored[3])
    assert (vector.version, len(vector)) == (SERVED, 384)
    assert vector == pytest.approx(shared_embedder().embed_query(stored[3].search_text()), abs=1e-6)

    # a write during the build: the served index gets the served model's vector, the build the new one's
    late = _memory(900)
    memories.add(late)
    image = memory_item(table, late).serialize()
    stream = build_stream_indexer(settings, embedder=new)
    keys = {"pk": image["pk"], "sk": image["sk"]}
    stream.apply([{"eventName": "INSERT", "dynamodb": {"Keys": keys, "NewImage": image}}])
    served.client.indices.refresh(index="_all")
    docs = {
        name: served.client.get(index=name, id=f"tm_q:{late.id}", routing="tm_q")["_source"]
        for name in (builds.served_name, builds.building_name)
    }
    versions = {name: doc["embedding_version"] for name, doc in docs.items()}
    assert versions == {builds.served_name: SERVED, builds.building_name: NEW}

    for n in range(1, plan["pages"]):
        run.embed_page(f"reindex/{NEW}/pages/{n:06d}.json", NEW)
    assert run.finish()["swapped"]
    monkeypatch.setattr(opensearch_builds, "SERVED_CHECK_S", 0.0)  # the reader's next look sees the swap
    vector = recall_vector(stored[5])
    assert (vector.version, len(vector)) == (NEW, 12)
    assert vector == pytest.approx(new.embed_query(stored[5].search_text()))


def test_an_unreachable_domain_leaves_queries_to_the_configured_model_instead_of_failing_them():
    from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds

    index = OpenSearchIndex(opensearch_client("http://127.0.0.1:9", auth="none", timeout=1), "down", 12)
    builds = OpenSearchIndexBuilds(index, index.client)
    assert builds.served_version_cached() is None


def test_the_reindex_progress_says_the_search_engine_is_unavailable_when_the_domain_is_down(aws, monkeypatch):
    from cairn.domain.errors import Unavailable

    settings, *_ = aws
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_endpoint())  # the run record is read (absent) first
    down = settings.model_copy(
        update={"opensearch_endpoint": "http://127.0.0.1:9", "opensearch_timeout_s": 1}
    )
    container = build_container(down, embedder=HashEmbedder(NEW, 12))
    with pytest.raises(Unavailable):
        container.reindex_progress()

"""RecallService over real parts: SQLite repository and index in one file, the ONNX MiniLM embedder."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cairn.adapters.embedding import OnnxMiniLmEmbedder
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository, SqliteRelationRepository
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.errors import InvalidInput, Unavailable
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    Relation,
    Scope,
)
from cairn.services.indexing import MemoryIndexer
from cairn.services.recall import RecallService, RecallTuning

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEAM = "team_a"
ALICE = Principal(TEAM, "alice", "key_a", frozenset({KeyScope.READ}))
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

FACTS = {
    "m-db": "The staging database is Postgres 16 running on RDS",
    "m-lint": "Use ruff for linting and formatting the Python code",
    "m-deploy": "Deploys go out with cdk deploy from the release branch",
    "m-flaky": "The payments integration test is flaky when the sandbox API is slow",
    "m-cat": "Maria adopted a cat called Pixel last spring",
}


@pytest.fixture(scope="module")
def embedder():
    return OnnxMiniLmEmbedder()


class Stack:
    def __init__(self, db: SqliteDatabase, embedder) -> None:
        self.memories = SqliteMemoryRepository(db)
        self.relations = SqliteRelationRepository(db)
        self.index = SqliteSearchIndex(db)
        self.indexer = MemoryIndexer(self.index, embedder)
        self.embedder = embedder

    def add(self, memory_id: str, content: str, **fields) -> Memory:
        fields.setdefault("team_id", TEAM)
        fields.setdefault("kind", MemoryKind.FACT)
        fields.setdefault("project", "proj")
        fields.setdefault("created_at", NOW - timedelta(days=1))
        memory = Memory(id=memory_id, content=content, **fields)
        self.memories.add(memory)
        self.indexer.index([memory])
        return memory

    def service(self, embedder=None, **kwargs) -> RecallService:
        return RecallService(
            self.memories, self.index, embedder or self.embedder, self.relations, clock=lambda: NOW, **kwargs
        )


@pytest.fixture
def stack(tmp_path, embedder):
    db = SqliteDatabase(tmp_path / "cairn.db")
    s = Stack(db, embedder)
    for memory_id, content in FACTS.items():
        s.add(memory_id, content)
    yield s
    db.close()


def top_ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


def test_a_memory_is_recalled_by_its_keywords(stack):
    result = stack.service().recall(ALICE, "which linter do we use? ruff?", MemoryFilter(project="proj"))
    assert top_ids(result)[0] == "m-lint"
    assert result.hits[0].lexical_rank == 1
    assert result.degraded is None


def test_a_memory_is_recalled_by_meaning_without_shared_words(stack):
    result = stack.service().recall(ALICE, "what pet does she own", MemoryFilter(project="proj"), limit=2)
    assert top_ids(result)[0] == "m-cat"
    assert result.hits[0].semantic_rank == 1


def test_limit_caps_the_hits_and_scores_descend(stack):
    # the floor off: this is about ranking mechanics, and the third memory is barely related
    result = stack.service(tuning=RecallTuning(floor=None)).recall(
        ALICE, "database deploy", MemoryFilter(), limit=3
    )
    assert len(result.hits) == 3
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_recall_is_confined_to_the_team_and_the_filter(stack):
    stack.add("m-other-team", "Postgres 16 on RDS is the staging database", team_id="team_b")
    stack.add("m-other-project", "Postgres 16 staging database elsewhere", project="elsewhere")
    stack.add("m-bob", "Postgres staging database password hint", scope=Scope.PERSONAL, owner="bob")
    result = stack.service().recall(
        ALICE, "staging database postgres", MemoryFilter(project="proj"), limit=20
    )
    found = set(top_ids(result))
    assert "m-db" in found
    assert not found & {"m-other-team", "m-other-project", "m-bob"}


def test_superseded_memories_are_left_out_unless_asked_for(stack):
    old = stack.memories.get(TEAM, "m-db")
    closed = replace(old, superseded_by="m-db2")
    stack.memories.put(closed)
    stack.indexer.index([closed])
    stack.add("m-db2", "The staging database is Postgres 17 running on Aurora")
    service = stack.service()
    assert "m-db" not in top_ids(service.recall(ALICE, "staging database", MemoryFilter(), limit=10))
    history = service.recall(ALICE, "staging database", MemoryFilter(include_superseded=True), limit=10)
    assert {"m-db", "m-db2"} <= set(top_ids(history))


def test_hits_the_repository_no_longer_has_are_dropped(stack):
    stack.memories.delete(TEAM, "m-lint")  # the index lags: nobody told it
    result = stack.service().recall(ALICE, "ruff linting", MemoryFilter(), limit=10)
    assert "m-lint" not in top_ids(result)


def test_recalled_memories_get_their_access_recorded(stack):
    stack.service().recall(ALICE, "ruff linting", MemoryFilter(), limit=1)
    memory = stack.memories.get(TEAM, "m-lint")
    assert memory.access_count == 1
    assert memory.last_accessed_at == NOW


def test_access_recording_can_be_switched_off(stack):
    stack.service(record_access=False).recall(ALICE, "ruff linting", MemoryFilter(), limit=1)
    assert stack.memories.get(TEAM, "m-lint").access_count == 0


def test_a_pinned_memory_outranks_an_equally_relevant_one(stack):
    stack.add("m-a", "Kafka topic retention is seven days")
    stack.add("m-b", "Kafka topic retention is seven days", pinned=True)
    result = stack.service().recall(ALICE, "kafka topic retention", MemoryFilter(), limit=2)
    assert top_ids(result)[0] == "m-b"


def test_a_plan_s_section_ranks_below_an_equally_relevant_account_of_what_was_done(stack):
    stack.add("m-plan", "Kafka topic retention is seven days", kind=MemoryKind.DECISION, tags=("plan",))
    stack.add("m-done", "Kafka topic retention is seven days", kind=MemoryKind.DECISION)
    result = stack.service().recall(ALICE, "kafka topic retention", MemoryFilter(), limit=2)
    assert top_ids(result) == ["m-done", "m-plan"]


def test_related_memories_come_in_through_the_graph(stack):
    stack.add("m-fix", "Retry the sandbox calls with exponential backoff")
    stack.relations.add(
        Relation(id="rel-1", team_id=TEAM, source_id="m-fix", predicate="fixes", target_id="m-flaky")
    )
    result = stack.service().recall(ALICE, "flaky payments integration test", MemoryFilter(), limit=10)
    via = {h.memory.id: h.via for h in result.hits}
    assert via["m-flaky"] == "search"
    assert "m-fix" in via


def test_graph_neighbours_outside_the_filter_stay_out(stack):
    stack.add("m-secret", "sandbox credentials rotation", scope=Scope.PERSONAL, owner="bob")
    stack.relations.add(
        Relation(id="rel-2", team_id=TEAM, source_id="m-secret", predicate="fixes", target_id="m-flaky")
    )
    result = stack.service().recall(ALICE, "flaky payments integration test", MemoryFilter())
    assert "m-secret" not in top_ids(result)


class BrokenEmbedder:
    version = "broken"
    dimension = 384

    def embed(self, texts):
        raise RuntimeError("model file missing")

    def embed_query(self, text):
        raise RuntimeError("model file missing")


def test_an_embedder_failure_degrades_to_keywords_and_says_so(stack):
    result = stack.service(embedder=BrokenEmbedder()).recall(ALICE, "ruff linting", MemoryFilter())
    assert top_ids(result)[0] == "m-lint"
    assert result.hits[0].semantic_rank is None
    assert "semantic" in result.degraded


class DownIndex:
    """A search engine that is unreachable."""

    def search(self, *args, **kwargs):
        raise Unavailable("search engine unreachable")


def test_an_unavailable_index_degrades_to_keywords_over_the_repository_and_says_so(stack):
    stack.add("m-bob", "ruff settings for bob only", scope=Scope.PERSONAL, owner="bob")
    service = RecallService(stack.memories, DownIndex(), stack.embedder, stack.relations, clock=lambda: NOW)
    result = service.recall(ALICE, "ruff linting?", MemoryFilter(project="proj"))
    assert top_ids(result) == ["m-lint"]
    assert result.hits[0].lexical_rank == 1
    assert "search index unavailable" in result.degraded
    assert stack.memories.get(TEAM, "m-lint").access_count == 1


@pytest.mark.parametrize("query", ["?", '"', "AND OR NOT", "*", "(", "col:val", "🦀", "x" * 10_000])
def test_hostile_queries_return_a_result_instead_of_raising(stack, query):
    result = stack.service().recall(ALICE, query, MemoryFilter())
    assert result.degraded is None


def test_a_blank_query_recalls_nothing(stack):
    assert stack.service().recall(ALICE, "   ", MemoryFilter()).hits == ()


@pytest.mark.parametrize("limit", [0, 101])
def test_a_limit_out_of_range_is_invalid_input(stack, limit):
    with pytest.raises(InvalidInput):
        stack.service().recall(ALICE, "ruff", MemoryFilter(), limit=limit)


def test_the_embedder_gives_unit_vectors_of_its_dimension_and_batches_agree_with_single_queries(embedder):
    texts = ["short", "a much longer sentence about deploying the staging database with cdk"]
    batch = embedder.embed(texts)
    assert [len(v) for v in batch] == [384, 384]
    assert sum(x * x for x in batch[1]) == pytest.approx(1.0, abs=1e-4)
    single = embedder.embed_query(texts[1])
    assert sum(a * b for a, b in zip(batch[1], single, strict=True)) == pytest.approx(1.0, abs=1e-4)
    assert embedder.version == "minilm-l6-int8-384"


def test_the_caller_sees_only_their_own_personal_memories_whatever_the_filter_says(stack):
    stack.add("m-bob", "ruff settings for bob only", scope=Scope.PERSONAL, owner="bob")
    stack.add("m-alice", "ruff settings for alice only", scope=Scope.PERSONAL, owner="alice")
    result = stack.service().recall(ALICE, "ruff settings", MemoryFilter(member="bob"), limit=10)
    assert "m-alice" in top_ids(result) and "m-bob" not in top_ids(result)


def test_recall_stays_in_the_callers_team(stack):
    outsider = Principal("team_b", "alice", "key_b", frozenset({KeyScope.ADMIN}))
    assert stack.service().recall(outsider, "ruff linting", MemoryFilter()).hits == ()


#: one project's memories, all about its CDN: every question about the project resembles all of them
CDN_PROJECT = [
    "CloudFront on AWS sits in front of the map server; its origin is origin-map.example.org over HTTPS",
    "Invalidate the CloudFront cache after each deploy with the AWS CLI create-invalidation command",
    "CloudFront returned 502 because nginx had no server block for the origin host AWS pointed at",
    "The /api/* behavior in CloudFront forwards query strings to the API origin (AWS console, Behaviors tab)",
    "Deploys bypass CloudFront: GitHub Actions rsyncs the Go binary to the server's IP, not the AWS edge",
    "CloudFront only handles HTTP and HTTPS, so SSH and rsync go to the server's IP, not to AWS",
    "The health check step curls the service on the server itself, bypassing CloudFront and AWS",
    "The CloudFront distribution uses the AWS managed caching policy for static assets",
    "nginx behind CloudFront proxies /api/ to the MCP server on port 3333; AWS times out after 60 s",
    "The AWS certificate for the CloudFront distribution is issued in us-east-1",
    "Streaming responses through CloudFront need proxy buffering off in nginx, or AWS holds them back",
    "CloudFront caches the favicon for a day; the AWS invalidation clears it after a deploy",
    "The CloudFront origin request policy forwards the Authorization header to the AWS origin",
    "Logs of CloudFront requests land in an AWS S3 bucket with a 30 day lifecycle rule",
    "CloudFront adds the X-Forwarded-For header; the map server reads the client IP from it behind AWS",
    "WebSocket upgrades through CloudFront work once the AWS behavior allows all HTTP methods",
    "A CloudFront function on AWS rewrites /assistant to /assistant/ before the origin sees it",
    "CloudFront compresses JSON responses from the API when the AWS behavior has compression on",
    "The origin read timeout in CloudFront was raised to 60 s in AWS for the slow radiation queries",
    "AWS WAF is attached to the CloudFront distribution and blocks requests without a user agent",
    "CloudFront custom error pages are off so the API's own JSON errors reach the client through AWS",
    "DNS for the map domain is a CNAME to the CloudFront distribution, managed outside AWS",
    "The CloudFront default TTL is 0 for /api/* so AWS never serves stale readings",
]


@pytest.fixture
def cdn_stack(tmp_path, embedder):
    db = SqliteDatabase(tmp_path / "cdn.db")
    s = Stack(db, embedder)
    for n, content in enumerate(CDN_PROJECT):
        s.add(f"m-cdn-{n}", content)
    yield s
    db.close()


def test_a_question_that_shares_only_the_projects_own_words_gets_nothing_relevant(cdn_stack):
    question = "How much did CloudFront cost on last month's AWS bill?"
    service = cdn_stack.service()
    # the ranking alone answers: every memory is about CloudFront on AWS, and the embedding agrees
    assert cdn_stack.service(tuning=RecallTuning(floor=None)).recall(ALICE, question, MemoryFilter()).hits
    result = service.recall(ALICE, question, MemoryFilter())
    assert result.hits == () and result.nothing_relevant


def test_a_paraphrased_question_that_holds_one_rare_word_of_its_memory_is_answered(cdn_stack):
    result = cdn_stack.service().recall(ALICE, "Why was the edge answering 502 bad gateway?", MemoryFilter())
    assert top_ids(result)[0] == "m-cdn-2"


def test_one_sessions_later_account_outranks_its_earlier_one_when_their_scores_nearly_tie(stack):
    def said(memory_id: str, line: int, content: str) -> None:
        where = Provenance(session_id="s-1", transcript_key="t/s-1/transcript-1.jsonl.gz", line_start=line)
        stack.add(memory_id, content, kind=MemoryKind.EXCERPT, provenance=where)

    said("m-first-account", 332, "agent: the web chat gets its Anthropic API key from the auth store")
    said(
        "m-later-account",
        546,
        "agent: fixed: at deploy the chat's Anthropic key now comes from a GitHub secret",
    )
    query = "Where does the web chat get its Anthropic API key?"

    def order(within: float) -> list[str]:
        hits = (
            stack.service(tuning=RecallTuning(later_within=within)).recall(ALICE, query, MemoryFilter()).hits
        )
        return [h.memory.id for h in hits if h.memory.id in {"m-first-account", "m-later-account"}]

    assert order(0.0) == ["m-first-account", "m-later-account"]  # the words alone favour the first account
    assert order(RecallTuning().later_within) == ["m-later-account", "m-first-account"]

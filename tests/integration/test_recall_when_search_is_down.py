"""When OpenSearch is unreachable, recall answers from the source of truth by keywords and says so."""

import socket

import pytest
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.bootstrap import shared_embedder
from cairn.domain.models import KeyScope, Memory, MemoryFilter, MemoryKind, Principal, Scope, content_hash
from cairn.services.recall import RecallService

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CALLER = Principal("team_a", "dev", "key_a", frozenset({KeyScope.READ}))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def _memory(i: int, text: str, team: str = "team_a") -> Memory:
    return Memory(
        id=f"mem_{i:026d}",
        team_id=team,
        kind=MemoryKind.FACT,
        content=text,
        scope=Scope.PROJECT,
        project="p",
        content_hash=content_hash(MemoryKind.FACT, text),
    )


@pytest.fixture
def recall_over_a_down_engine(tmp_path):
    repo = SqliteMemoryRepository(SqliteDatabase(tmp_path / "c.db"))
    for i, text in enumerate(
        ["Deploys go through the blue-green pipeline", "The cache is Redis 7 on port 6380", "Lint with ruff"]
    ):
        repo.add(_memory(i, text))
    repo.add(_memory(9, "Redis port for team B is 6390", team="team_b"))
    down = OpenSearchIndex(
        opensearch_client(f"http://127.0.0.1:{_closed_port()}", auth="none", timeout=0.5), "cairn", 384
    )
    return RecallService(repo, down, shared_embedder())


def test_recall_degrades_to_keywords_and_says_so(recall_over_a_down_engine):
    result = recall_over_a_down_engine.recall(CALLER, "which port does redis use?", MemoryFilter(project="p"))
    assert result.degraded and "search index unavailable" in result.degraded
    assert [h.memory.content for h in result.hits][:1] == ["The cache is Redis 7 on port 6380"]


def test_the_fallback_stays_inside_the_callers_team(recall_over_a_down_engine):
    result = recall_over_a_down_engine.recall(CALLER, "redis port", MemoryFilter())
    assert all(h.memory.team_id == "team_a" for h in result.hits)
    assert "6390" not in " ".join(h.memory.content for h in result.hits)

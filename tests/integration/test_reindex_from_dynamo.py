"""`cairn reindex` in AWS mode: OpenSearch (osmem-server) is rebuilt from DynamoDB (moto)."""

import pytest
from cairn.adapters.aws.dynamo import DynamoMemoryRepository, DynamoTeamRepository
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.bootstrap import shared_embedder
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Team, utcnow
from cairn.services.indexing import MemoryIndexer
from cairn.services.reindex import ReindexService

from tests.contract.adapters_aws import drop_table, new_table, osmem_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_lost_opensearch_index_is_rebuilt_from_dynamodb_for_every_team():
    table = new_table()
    try:
        teams, memories = DynamoTeamRepository(table), DynamoMemoryRepository(table)
        for team_id in ("team_a", "team_b"):
            teams.add_team(Team(team_id, team_id, utcnow()))
        memories.add(
            Memory(
                id="mem_a",
                team_id="team_a",
                kind=MemoryKind.FACT,
                content="Kafka runs 3 brokers",
                project="p",
            )
        )
        memories.add(
            Memory(
                id="mem_b",
                team_id="team_b",
                kind=MemoryKind.FACT,
                content="Kafka topic is orders",
                project="p",
            )
        )
        with osmem_server().clone() as clone:
            index = OpenSearchIndex(opensearch_client(clone.url, auth="none"), "rx", 384, refresh=True)
            index.supports_knn = False
            report = ReindexService(teams, memories, index, MemoryIndexer(index, shared_embedder())).rebuild()
            assert (report.teams, report.memories) == (2, 2)
            found_a = index.search("team_a", "kafka", None, MemoryFilter(), 10, 0).lexical
            found_b = index.search("team_b", "kafka", None, MemoryFilter(), 10, 0).lexical
            assert [i for i, _ in found_a] == ["mem_a"] and [i for i, _ in found_b] == ["mem_b"]
    finally:
        drop_table(table)

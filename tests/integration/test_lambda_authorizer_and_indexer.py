"""The authorizer and indexer Lambda entry points, imported cold and invoked as Lambda would,
over DynamoDB on moto and OpenSearch on osmem-server."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from aws_lambda_powertools.utilities.typing import LambdaContext
from cairn.adapters.aws.dynamo import DynamoMemoryRepository, DynamoTeamRepository
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.domain.models import Memory, MemoryFilter, MemoryKind
from cairn.domain.ports import usage_key
from cairn.services.keys import KeyService

from tests.contract.adapters_aws import (
    CREDENTIALS,
    REGION,
    drop_table,
    moto_endpoint,
    new_table,
    osmem_server,
)
from tests.integration.test_dynamo_streams import stream_records

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EVENTS = Path(__file__).resolve().parents[1] / "events" / "apigw"


def _context() -> LambdaContext:
    ctx = LambdaContext()
    ctx._function_name, ctx._memory_limit_in_mb, ctx._aws_request_id = "cairn-dev-fn", 512, "req-1"
    ctx._invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-dev-fn"
    return ctx


@pytest.fixture
def table(monkeypatch):
    t = new_table()
    monkeypatch.setenv("CAIRN_MODE", "aws")
    monkeypatch.setenv("CAIRN_TABLE_NAME", t.name)
    monkeypatch.setenv("CAIRN_DYNAMO_ENDPOINT", moto_endpoint())
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS[1])
    yield t
    drop_table(t)


def _load(name: str):
    sys.modules.pop(f"functions.{name}.handler", None)
    return importlib.import_module(f"functions.{name}.handler")


def _authorizer_event(key: str) -> dict:
    return json.loads((EVENTS / "authorizer_request.json").read_text().replace("${CAIRN_API_KEY}", key))


def test_the_authorizer_allows_a_valid_key_for_the_whole_stage_and_names_its_team(table):
    team, _, secret = KeyService(DynamoTeamRepository(table)).create_team("alpha", "ana")
    answer = _load("authorizer").handler(_authorizer_event(secret), _context())
    statement = answer["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"] == "arn:aws:execute-api:eu-west-1:123456789012:k7q2x9w4ab/dev/*/*"
    assert answer["context"]["team_id"] == team.id and answer["context"]["scopes"] == "admin"
    assert answer["usageIdentifierKey"] == usage_key(team.id)


@pytest.mark.parametrize("key", ["", "cairn_wrong", "revoked"])
def test_the_authorizer_answers_unauthorized_for_missing_unknown_and_revoked_keys(table, key):
    keys = KeyService(DynamoTeamRepository(table))
    if key == "revoked":
        _, admin_key, key = keys.create_team("alpha", "ana")
        keys.revoke_key(keys.authenticate(key), admin_key.id)
    handler = _load("authorizer").handler
    with pytest.raises(Exception, match="^Unauthorized$"):
        handler(_authorizer_event(key), _context())


def test_the_indexer_makes_stream_changes_searchable_and_removes_deleted_memories(table, monkeypatch):
    with osmem_server().clone() as clone:
        monkeypatch.setenv("CAIRN_OPENSEARCH_ENDPOINT", clone.url)
        monkeypatch.setenv("CAIRN_OPENSEARCH_AUTH", "none")
        monkeypatch.setenv("CAIRN_OPENSEARCH_INDEX_PREFIX", "idx")
        repo = DynamoMemoryRepository(table)
        kept = Memory(
            id="mem_01",
            team_id="team_a",
            kind=MemoryKind.FACT,
            content="Grafana runs on port 3300",
            project="p",
        )
        gone = Memory(
            id="mem_02", team_id="team_a", kind=MemoryKind.FACT, content="Grafana theme is dark", project="p"
        )
        repo.add(kept)
        repo.add(gone)
        repo.delete("team_a", "mem_02")

        result = _load("indexer").handler({"Records": stream_records(table)}, _context())
        assert result == {"indexed": 1, "removed": 1, "reused": 0}

        index = OpenSearchIndex(opensearch_client(clone.url, auth="none"), "idx", 384, refresh=True)
        index._client.indices.refresh(index=index.index)
        found = index.search("team_a", "grafana", None, MemoryFilter(), 10, 0)
        assert [memory_id for memory_id, _ in found.lexical] == ["mem_01"]
        assert index.search("team_b", "grafana", None, MemoryFilter(), 10, 0).lexical == ()
        # the same memory again (an import wrote its entry first, or its text did not change): the
        # entry's vector of this model is taken as it is, nothing is embedded
        again = _load("indexer").handler({"Records": stream_records(table)}, _context())
        assert again == {"indexed": 1, "removed": 1, "reused": 1}

"""In AWS mode recall sends both legs to OpenSearch in one `_msearch` request."""

import pytest
from cairn.adapters.aws.opensearch import OpenSearchIndex
from cairn.bootstrap import build_container, shared_embedder
from cairn.domain.models import KeyScope, MemoryFilter, Principal
from cairn.settings import Settings

from tests.contract.adapters_aws import (
    CREDENTIALS,
    REGION,
    drop_table,
    moto_endpoint,
    new_table,
    osmem_server,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_aws_recall_sends_one_msearch_per_query(monkeypatch):
    table = new_table()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS[1])
    try:
        with osmem_server().clone() as clone:
            settings = Settings(
                mode="aws",
                table_name=table.name,
                bucket="unused",
                opensearch_endpoint=clone.url,
                opensearch_auth="none",
                dynamo_endpoint=moto_endpoint(),
                aws_region=REGION,
            )
            container = build_container(settings, embedder=shared_embedder())
            client_type = type(container.recall._index._client)
            real_msearch = client_type.msearch
            calls = []

            def counted_msearch(self, *args, **kwargs):
                calls.append(kwargs.get("index"))
                return real_msearch(self, *args, **kwargs)

            monkeypatch.setattr(client_type, "msearch", counted_msearch)  # observe, not replace
            container.recall.recall(
                Principal("team_a", "dev", "k", frozenset({KeyScope.READ})), "which port?", MemoryFilter(), 10
            )
            assert isinstance(container.recall._index, OpenSearchIndex)
            assert len(calls) == 1
    finally:
        drop_table(table)

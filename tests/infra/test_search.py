"""OpenSearch domain sizing and protection, and who may call it."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import function_by_service, resources

pytestmark = pytest.mark.infra


def test_domain_is_encrypted_at_rest_and_between_nodes_and_https_only(dev, prod):
    for template in (dev, prod):
        template.has_resource_properties(
            "AWS::OpenSearchService::Domain",
            {
                "EncryptionAtRestOptions": {"Enabled": True},
                "NodeToNodeEncryptionOptions": {"Enabled": True},
                "DomainEndpointOptions": Match.object_like(
                    {"EnforceHTTPS": True, "TLSSecurityPolicy": "Policy-Min-TLS-1-2-2019-07"}
                ),
            },
        )


def test_dev_domain_is_one_cheap_node_with_10_gb_gp3(dev):
    dev.has_resource_properties(
        "AWS::OpenSearchService::Domain",
        {
            "ClusterConfig": Match.object_like(
                {
                    "InstanceCount": 1,
                    "InstanceType": "t3.small.search",
                    "ZoneAwarenessEnabled": False,
                    "DedicatedMasterEnabled": False,
                }
            ),
            "EBSOptions": {"EBSEnabled": True, "VolumeSize": 10, "VolumeType": "gp3"},
        },
    )


def test_prod_domain_spans_three_zones_with_dedicated_masters(prod):
    prod.has_resource_properties(
        "AWS::OpenSearchService::Domain",
        {
            "ClusterConfig": Match.object_like(
                {
                    "InstanceCount": 3,
                    "ZoneAwarenessEnabled": True,
                    "ZoneAwarenessConfig": {"AvailabilityZoneCount": 3},
                    "DedicatedMasterEnabled": True,
                    "DedicatedMasterCount": 3,
                }
            ),
        },
    )


def test_domain_resource_policy_admits_only_the_api_mcp_indexer_transfer_consolidate_and_reindex_roles(synth):
    template = synth.json["dev"]
    (domain,) = resources(template, "AWS::OpenSearchService::Domain").values()
    statements = domain["Properties"]["AccessPolicies"]["Statement"]
    assert len(statements) == 1
    principals = statements[0]["Principal"]["AWS"]
    _, api = function_by_service(template, "cairn-api")
    _, mcp = function_by_service(template, "cairn-mcp")
    _, indexer = function_by_service(template, "cairn-indexer")
    _, transfer = function_by_service(template, "cairn-transfer")
    (consolidate,) = [
        f
        for f in resources(template, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "handler.consolidate"
    ]
    reindex = [
        function_by_service(template, "cairn-reindex", f"handler.{t}")[1]
        for t in ("plan", "embed_page", "finish")
    ]
    assert sorted(p["Fn::GetAtt"][0] for p in principals) == sorted(
        f["Properties"]["Role"]["Fn::GetAtt"][0] for f in (api, mcp, indexer, transfer, consolidate, *reindex)
    )
    assert statements[0]["Action"] == "es:ESHttp*"
    assert "*" not in principals


def test_domain_logs_go_to_cloudwatch_without_a_custom_resource(dev, synth):
    dev.has_resource_properties(
        "AWS::OpenSearchService::Domain",
        {
            "LogPublishingOptions": Match.object_like(
                {"SEARCH_SLOW_LOGS": Match.object_like({"Enabled": True})}
            )
        },
    )
    assert not [r for r in synth.json["dev"]["Resources"].values() if r["Type"].startswith("Custom::")]


def test_indexer_consumes_the_table_stream_with_a_failure_queue(dev):
    dev.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "StartingPosition": "TRIM_HORIZON",
            "BisectBatchOnFunctionError": True,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "DestinationConfig": {"OnFailure": {"Destination": Match.any_value()}},
            "EventSourceArn": {"Fn::GetAtt": [Match.string_like_regexp("StorageTable"), "StreamArn"]},
        },
    )

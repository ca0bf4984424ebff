"""Lambda functions: runtime, layer, tracing, environment contract, log retention."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import function_by_service, resources

pytestmark = pytest.mark.infra

COMMON = {
    "CAIRN_MODE",
    "CAIRN_ENV",
    "CAIRN_METRICS",
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_TRACE_DISABLED",
}
EXPECTED_ENV = {
    ("cairn-api", "handler.handler"): {
        "CAIRN_TABLE_NAME",
        "CAIRN_BUCKET",
        "CAIRN_OPENSEARCH_ENDPOINT",
        "CAIRN_OPENSEARCH_INDEX_PREFIX",
        "CAIRN_OPENSEARCH_SHARDS",
        "CAIRN_OPENSEARCH_REPLICAS",
        "CAIRN_EMBEDDING_DIM",
        "CAIRN_STATE_MACHINE_ARN",
        "CAIRN_UI_SECRET_ARN",
        "CAIRN_KMS_KEY_ID",
        "CAIRN_TRANSFER_FUNCTION",
    },
    ("cairn-transfer", "handler.handler"): {
        "CAIRN_TABLE_NAME",
        "CAIRN_BUCKET",
        "CAIRN_OPENSEARCH_ENDPOINT",
        "CAIRN_OPENSEARCH_INDEX_PREFIX",
        "CAIRN_OPENSEARCH_SHARDS",
        "CAIRN_OPENSEARCH_REPLICAS",
        "CAIRN_EMBEDDING_DIM",
        "CAIRN_KMS_KEY_ID",
    },
    ("cairn-mcp", "handler.handler"): {
        "CAIRN_TABLE_NAME",
        "CAIRN_BUCKET",
        "CAIRN_OPENSEARCH_ENDPOINT",
        "CAIRN_OPENSEARCH_INDEX_PREFIX",
        "CAIRN_OPENSEARCH_SHARDS",
        "CAIRN_OPENSEARCH_REPLICAS",
        "CAIRN_EMBEDDING_DIM",
        "CAIRN_ALLOWED_HOSTS",
    },
    ("cairn-authorizer", "handler.handler"): {"CAIRN_TABLE_NAME"},
    ("cairn-sweeper", "handler.handler"): {"CAIRN_TABLE_NAME", "CAIRN_BUCKET"},
    ("cairn-indexer", "handler.handler"): {
        "CAIRN_TABLE_NAME",
        "CAIRN_OPENSEARCH_ENDPOINT",
        "CAIRN_OPENSEARCH_INDEX_PREFIX",
        "CAIRN_OPENSEARCH_SHARDS",
        "CAIRN_OPENSEARCH_REPLICAS",
        "CAIRN_EMBEDDING_DIM",
    },
    **{
        ("cairn-pipeline", f"handler.{stage}"): {
            "CAIRN_TABLE_NAME",
            "CAIRN_BUCKET",
            "CAIRN_KMS_KEY_ID",
            "CAIRN_EMBEDDING_DIM",
            "CAIRN_OPENSEARCH_ENDPOINT",
            "CAIRN_OPENSEARCH_INDEX_PREFIX",
            "CAIRN_OPENSEARCH_SHARDS",
            "CAIRN_OPENSEARCH_REPLICAS",
        }
        for stage in ("parse", "chunk", "extract", "consolidate", "reflect", "dream", "fail")
    },
    **{
        ("cairn-reindex", f"handler.{task}"): {
            "CAIRN_TABLE_NAME",
            "CAIRN_BUCKET",
            "CAIRN_KMS_KEY_ID",
            "CAIRN_EMBEDDING_DIM",
            "CAIRN_OPENSEARCH_ENDPOINT",
            "CAIRN_OPENSEARCH_INDEX_PREFIX",
            "CAIRN_OPENSEARCH_SHARDS",
            "CAIRN_OPENSEARCH_REPLICAS",
        }
        for task in ("plan", "embed_page", "finish")
    },
}


def test_every_function_runs_python312_on_x86_64_with_the_shared_layer_and_active_tracing(synth):
    for template in synth.json.values():
        functions = resources(template, "AWS::Lambda::Function")
        (layer_id,) = resources(template, "AWS::Lambda::LayerVersion")
        assert len(functions) == len(EXPECTED_ENV)
        for fn in functions.values():
            props = fn["Properties"]
            assert props["Runtime"] == "python3.12"
            assert props["Architectures"] == ["x86_64"]
            assert props["Layers"] == [{"Ref": layer_id}]
            assert props["TracingConfig"] == {"Mode": "Active"}
            assert "LoggingConfig" in props


def test_layer_is_built_for_the_same_runtime_and_architecture(dev):
    dev.has_resource_properties(
        "AWS::Lambda::LayerVersion",
        {"CompatibleRuntimes": ["python3.12"], "CompatibleArchitectures": ["x86_64"]},
    )


@pytest.mark.parametrize(("service", "handler"), sorted(EXPECTED_ENV))
def test_each_function_gets_exactly_the_cairn_settings_it_uses(synth, service, handler):
    _, fn = function_by_service(synth.json["dev"], service, handler)
    variables = fn["Properties"]["Environment"]["Variables"]
    assert set(variables) == COMMON | EXPECTED_ENV[(service, handler)]
    assert variables["CAIRN_MODE"] == "aws"
    assert variables["CAIRN_ENV"] == "dev"
    assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "Cairn"
    if "CAIRN_EMBEDDING_DIM" in variables:
        assert variables["CAIRN_EMBEDDING_DIM"] == "384"
    if "CAIRN_OPENSEARCH_INDEX_PREFIX" in variables:
        assert variables["CAIRN_OPENSEARCH_INDEX_PREFIX"] == "cairn-dev"


def test_logs_are_kept_a_week_in_dev_and_three_months_in_prod(synth):
    for env, days in (("dev", 7), ("prod", 90)):
        groups = resources(synth.json[env], "AWS::Logs::LogGroup")
        assert groups
        assert {g["Properties"]["RetentionInDays"] for g in groups.values()} == {days}


def test_authorizer_and_api_functions_use_their_own_handlers(dev):
    dev.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "handler.handler",
            "Environment": {"Variables": Match.object_like({"POWERTOOLS_SERVICE_NAME": "cairn-authorizer"})},
        },
    )


def test_the_memories_index_gets_its_shards_and_replicas_from_the_environment_config(synth):
    for env, layout in {"dev": ("1", "0"), "prod": ("2", "1")}.items():
        _, fn = function_by_service(synth.json[env], "cairn-indexer", "handler.handler")
        variables = fn["Properties"]["Environment"]["Variables"]
        assert (variables["CAIRN_OPENSEARCH_SHARDS"], variables["CAIRN_OPENSEARCH_REPLICAS"]) == layout


def test_x_ray_sdk_subsegments_are_on_in_prod_and_off_in_dev_where_cold_starts_matter_more(synth):
    for env, disabled in {"dev": "true", "prod": "false"}.items():
        _, fn = function_by_service(synth.json[env], "cairn-api", "handler.handler")
        assert fn["Properties"]["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == disabled


def test_the_api_reads_a_generated_ui_secret_that_no_other_function_can(synth):
    template = synth.json["dev"]
    secrets = resources(template, "AWS::SecretsManager::Secret")
    assert len(secrets) == 1
    [(secret_id, secret)] = secrets.items()
    assert secret["Properties"]["GenerateSecretString"]["PasswordLength"] == 48
    _, api = function_by_service(template, "cairn-api", "handler.handler")
    assert api["Properties"]["Environment"]["Variables"]["CAIRN_UI_SECRET_ARN"] == {"Ref": secret_id}
    readers = [
        name
        for name, policy in resources(template, "AWS::IAM::Policy").items()
        if secret_id in str(policy["Properties"]["PolicyDocument"])
    ]
    assert len(readers) == 1

"""API Gateway: routing, REQUEST authorizer, throttling, logging."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import function_by_service, resources

pytestmark = pytest.mark.infra


def _paths(template: dict) -> dict[str, str]:
    """logical id of each API Gateway resource -> its full path."""
    api_resources = resources(template, "AWS::ApiGateway::Resource")
    paths: dict[str, str] = {}

    def path_of(logical_id: str) -> str:
        if logical_id not in api_resources:  # the RestApi root
            return ""
        props = api_resources[logical_id]["Properties"]
        parent_id = props["ParentId"].get("Ref")
        return f"{path_of(parent_id) if parent_id else ''}/{props['PathPart']}"

    for logical_id in api_resources:
        paths[logical_id] = path_of(logical_id)
    return paths


def _methods(template: dict) -> list[tuple[str, str, dict]]:
    paths = _paths(template)
    out = []
    for method in resources(template, "AWS::ApiGateway::Method").values():
        props = method["Properties"]
        resource_id = props["ResourceId"]
        path = paths[resource_id["Ref"]] if "Ref" in resource_id else "/"
        out.append((props["HttpMethod"], path, props))
    return out


PUBLIC = {("GET", "/v1/health"), ("GET", "/"), ("ANY", "/ui"), ("ANY", "/ui/{proxy+}")}


def test_every_method_except_health_and_the_web_ui_requires_the_request_authorizer(synth):
    """The web UI's routes check their own signed session cookie in the app (a browser sends no
    Authorization header); everything else goes through the authorizer."""
    for template in synth.json.values():
        methods = _methods(template)
        assert {(m, p) for m, p, _ in methods} == {
            ("ANY", "/"),
            ("GET", "/"),
            ("ANY", "/ui"),
            ("ANY", "/ui/{proxy+}"),
            ("ANY", "/{proxy+}"),
            ("ANY", "/mcp"),
            ("GET", "/v1/health"),
        }
        for http_method, path, props in methods:
            if (http_method, path) in PUBLIC:
                assert props["AuthorizationType"] == "NONE"
                assert "AuthorizerId" not in props
            else:
                assert props["AuthorizationType"] == "CUSTOM", path
                assert props["AuthorizerId"] == {"Ref": Match.any_value()} or "Ref" in props["AuthorizerId"]


def test_authorizer_is_a_request_authorizer_on_the_authorization_header_cached_300_seconds(dev):
    dev.has_resource_properties(
        "AWS::ApiGateway::Authorizer",
        {
            "Type": "REQUEST",
            "IdentitySource": "method.request.header.Authorization",
            "AuthorizerResultTtlInSeconds": 300,
        },
    )


def _invoked(template: dict, service: str) -> set[str]:
    """The logical ids API Gateway may invoke for a function: itself and its aliases (SnapStart, warm)."""
    function_id, _ = function_by_service(template, service)
    aliases = resources(template, "AWS::Lambda::Alias").items()
    return {function_id} | {i for i, a in aliases if a["Properties"]["FunctionName"] == {"Ref": function_id}}


def test_mcp_goes_to_the_mcp_lambda_and_every_other_path_to_the_api_lambda(synth):
    template = synth.json["dev"]
    api, mcp = _invoked(template, "cairn-api"), _invoked(template, "cairn-mcp")
    for _, path, props in _methods(template):
        integration = props["Integration"]
        assert integration["Type"] == "AWS_PROXY"
        expected, other = (mcp, api) if path == "/mcp" else (api, mcp)
        uri = str(integration["Uri"])
        assert any(f"'{i}'" in uri for i in expected) and not any(f"'{i}'" in uri for i in other), path


def test_the_stage_throttles_all_teams_together_at_the_environment_rates(dev, prod):
    for template, rate, burst in ((dev, 10, 20), (prod, 100, 200)):
        template.has_resource_properties(
            "AWS::ApiGateway::Stage",
            {
                "MethodSettings": Match.array_with(
                    [Match.object_like({"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst})]
                )
            },
        )


def test_stage_writes_json_access_logs_and_traces(dev):
    dev.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "TracingEnabled": True,
            "AccessLogSetting": {
                "DestinationArn": Match.any_value(),
                "Format": Match.string_like_regexp("requestId"),
            },
        },
    )


def test_prod_keeps_warm_api_and_mcp_instances_that_api_gateway_invokes_and_dev_keeps_none(synth):
    dev, prod = synth.json["dev"], synth.json["prod"]
    # dev's aliases are SnapStart's published versions, none provisioned
    assert not [a for a in resources(dev, "AWS::Lambda::Alias").values() if "Provisioned" in str(a)]
    aliases = resources(prod, "AWS::Lambda::Alias")
    warm = {}
    for alias_id, alias in aliases.items():
        props = alias["Properties"]
        assert props["Name"] == "live"
        for service in ("cairn-api", "cairn-mcp"):
            function_id, _ = function_by_service(prod, service)
            if props["FunctionName"] == {"Ref": function_id}:
                warm[service] = (
                    alias_id,
                    props["ProvisionedConcurrencyConfig"]["ProvisionedConcurrentExecutions"],
                )
    assert {s: n for s, (_, n) in warm.items()} == {"cairn-api": 2, "cairn-mcp": 1}
    for _, path, props in _methods(prod):
        uri = str(props["Integration"]["Uri"])
        expected = warm["cairn-mcp" if path == "/mcp" else "cairn-api"][0]
        assert expected in uri, path


def test_prod_keeps_a_warm_authorizer_instance_that_api_gateway_calls_and_dev_keeps_none(synth):
    dev, prod = synth.json["dev"], synth.json["prod"]
    function_id, _ = function_by_service(prod, "cairn-authorizer")
    warm = {  # the authorizer's aliases: logical id -> properties
        alias_id: alias["Properties"]
        for alias_id, alias in resources(prod, "AWS::Lambda::Alias").items()
        if alias["Properties"]["FunctionName"] == {"Ref": function_id}
    }
    configs = [a["ProvisionedConcurrencyConfig"] for a in warm.values()]
    assert [c["ProvisionedConcurrentExecutions"] for c in configs] == [1]
    (authorizer,) = resources(prod, "AWS::ApiGateway::Authorizer").values()
    assert next(iter(warm)) in str(authorizer["Properties"]["AuthorizerUri"])
    dev_function, _ = function_by_service(dev, "cairn-authorizer")
    assert not [
        a
        for a in resources(dev, "AWS::Lambda::Alias").values()
        if a["Properties"]["FunctionName"] == {"Ref": dev_function} and "Provisioned" in str(a)
    ]


def test_dev_and_staging_restore_the_api_and_the_authorizer_from_snapstart_versions_api_gateway_invokes(
    synth,
):
    from infra.config import get_config

    assert get_config("staging").snap_start and not get_config("local").snap_start  # LocalStack: no restores
    template = synth.json["dev"]  # staging's units are dev's with other sizes
    aliases = resources(template, "AWS::Lambda::Alias")
    for service in ("cairn-api", "cairn-authorizer"):
        function_id, function = function_by_service(template, service)
        assert function["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}, service
        assert function["Properties"]["Runtime"] in ("python3.12", "python3.13"), service  # 3.12+ only
        (alias_id,) = [
            i for i, a in aliases.items() if a["Properties"]["FunctionName"] == {"Ref": function_id}
        ]
        assert "ProvisionedConcurrencyConfig" not in aliases[alias_id]["Properties"], service
        # API Gateway must call the alias: the unpublished $LATEST is never restored from a snapshot
        if service == "cairn-api":
            uris = [
                str(props["Integration"]["Uri"]) for _, path, props in _methods(template) if path != "/mcp"
            ]
            assert uris and all(alias_id in uri for uri in uris)
        else:
            (authorizer,) = resources(template, "AWS::ApiGateway::Authorizer").values()
            assert alias_id in str(authorizer["Properties"]["AuthorizerUri"])


def test_prod_uses_provisioned_concurrency_and_no_function_has_snapstart(synth):
    for function in resources(synth.json["prod"], "AWS::Lambda::Function").values():
        assert "SnapStart" not in function["Properties"]

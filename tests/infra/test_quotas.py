"""Per-team quotas: a usage plan metered by the team key the authorizer names, on every authorized
method, and 429 gateway responses that say when to retry."""

from __future__ import annotations

import json

import pytest

from infra.config import get_config
from infra.units.quotas import QUOTA_RETRY_AFTER_S, THROTTLED_RETRY_AFTER_S
from tests.infra.conftest import ENVIRONMENTS, resources
from tests.infra.test_api import PUBLIC, _methods

pytestmark = pytest.mark.infra


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_one_usage_plan_throttles_and_meters_each_team_at_the_environment_limits(synth, env):
    config = get_config(env)
    template = synth.json[env]
    [plan] = resources(template, "AWS::ApiGateway::UsagePlan").values()
    props = plan["Properties"]
    assert props["Throttle"] == {"RateLimit": config.team_rate_limit, "BurstLimit": config.team_burst_limit}
    assert props["Quota"] == {"Limit": config.team_daily_quota, "Period": "DAY"}
    [stage] = props["ApiStages"]
    [rest_api] = resources(template, "AWS::ApiGateway::RestApi")
    assert stage["ApiId"] == {"Ref": rest_api}
    # a team alone is slower than all teams together
    assert config.team_rate_limit < config.throttle_rate_limit
    # no key in the template: each team's is made with the team (cairn admin create-team)
    assert resources(template, "AWS::ApiGateway::ApiKey") == {}
    assert "UsagePlanId" in template["Outputs"]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_keys_come_from_the_authorizer_and_every_authorized_method_requires_one(synth, env):
    template = synth.json[env]
    [rest_api] = resources(template, "AWS::ApiGateway::RestApi").values()
    assert rest_api["Properties"]["ApiKeySourceType"] == "AUTHORIZER"
    for http_method, path, props in _methods(template):
        assert props.get("ApiKeyRequired", False) is ((http_method, path) not in PUBLIC), path


def test_only_the_emulator_environment_goes_without_per_team_keys():
    assert get_config("local").require_usage_plan_key is False
    for env in ("dev", "staging", "prod"):
        assert get_config(env).require_usage_plan_key is True


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_throttled_and_over_quota_answers_are_429s_with_retry_after_and_cairns_error_body(synth, env):
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in resources(synth.json[env], "AWS::ApiGateway::GatewayResponse").values()
    }
    for kind, retry_after, code in (
        ("THROTTLED", THROTTLED_RETRY_AFTER_S, "throttled"),
        ("QUOTA_EXCEEDED", QUOTA_RETRY_AFTER_S, "over_quota"),
    ):
        props = responses[kind]
        assert props["StatusCode"] == "429"
        assert props["ResponseParameters"] == {"gatewayresponse.header.Retry-After": f"'{retry_after}'"}
        body = json.loads(props["ResponseTemplates"]["application/json"])
        assert body["error"]["code"] == code and body["error"]["message"]

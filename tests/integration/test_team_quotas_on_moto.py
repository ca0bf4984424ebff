"""Per-team quotas, the part that is Cairn's: each team created gets its own API key in the environment's
usage plan (API Gateway on moto), and the authorizer names exactly that key for the team's requests.

API Gateway's metering itself (the 429 once a key's throttle or quota is spent) is not emulated by moto
or LocalStack's community edition; docs/deploy.md says it is proven only on a real account.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import boto3
import pytest
from aws_lambda_powertools.utilities.typing import LambdaContext
from cairn.adapters.aws.apigateway_quotas import ApiGatewayTeamQuotas
from cairn.adapters.aws.dynamo import DynamoTeamRepository
from cairn.domain.ports import usage_key
from cairn.services.keys import KeyService

from tests.contract.adapters_aws import CREDENTIALS, REGION, drop_table, moto_endpoint, new_table

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EVENTS = Path(__file__).resolve().parents[1] / "events" / "apigw"


@pytest.fixture
def gateway():
    client = boto3.client(
        "apigateway",
        endpoint_url=moto_endpoint(),
        region_name=REGION,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
    )
    api = client.create_rest_api(name="cairn-dev", apiKeySource="AUTHORIZER")
    plan = client.create_usage_plan(
        name="cairn-dev-team",
        throttle={"rateLimit": 5.0, "burstLimit": 10},
        quota={"limit": 20_000, "period": "DAY"},
    )
    yield client, plan["id"]
    client.delete_usage_plan(usagePlanId=plan["id"])
    client.delete_rest_api(restApiId=api["id"])


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


def _plan_keys(client, plan_id: str) -> dict[str, str]:
    """name -> value of every API key in the usage plan"""
    out = {}
    for item in client.get_usage_plan_keys(usagePlanId=plan_id)["items"]:
        key = client.get_api_key(apiKey=item["id"], includeValue=True)
        assert key["enabled"]
        out[key["name"]] = key["value"]
    return out


def _authorize(secret: str) -> dict:
    event = json.loads((EVENTS / "authorizer_request.json").read_text().replace("${CAIRN_API_KEY}", secret))
    ctx = LambdaContext()
    ctx._function_name, ctx._memory_limit_in_mb, ctx._aws_request_id = "cairn-dev-authorizer", 512, "r"
    ctx._invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-dev-authorizer"
    sys.modules.pop("functions.authorizer.handler", None)
    return importlib.import_module("functions.authorizer.handler").handler(event, ctx)


def test_two_teams_each_get_their_own_key_in_the_plan_and_the_authorizer_names_it(gateway, table):
    client, plan_id = gateway
    keys = KeyService(DynamoTeamRepository(table), quotas=ApiGatewayTeamQuotas(plan_id, "cairn-dev", client))
    alpha, _, alpha_secret = keys.create_team("alpha", "ana")
    beta, _, beta_secret = keys.create_team("beta", "bo")

    in_plan = _plan_keys(client, plan_id)
    assert in_plan == {
        f"cairn-dev-{alpha.id}": usage_key(alpha.id),
        f"cairn-dev-{beta.id}": usage_key(beta.id),
    }
    assert len(set(in_plan.values())) == 2 and all(len(v) >= 20 and v.isalnum() for v in in_plan.values())
    # each team's requests are metered against its own key, never the other's
    assert _authorize(alpha_secret)["usageIdentifierKey"] == usage_key(alpha.id)
    assert _authorize(beta_secret)["usageIdentifierKey"] == usage_key(beta.id)


def test_syncing_quotas_gives_older_teams_their_key_and_is_idempotent(gateway, table):
    client, plan_id = gateway
    repo = DynamoTeamRepository(table)
    old, _, _ = KeyService(repo).create_team("made-before-quotas", "ana")  # no key
    assert _plan_keys(client, plan_id) == {}

    keys = KeyService(repo, quotas=ApiGatewayTeamQuotas(plan_id, "cairn-dev", client))
    assert keys.provision_quotas() == 1
    assert keys.provision_quotas() == 1  # again: finds the key it made, adds nothing
    assert _plan_keys(client, plan_id) == {f"cairn-dev-{old.id}": usage_key(old.id)}
    assert len(client.get_api_keys(nameQuery=f"cairn-dev-{old.id}")["items"]) == 1

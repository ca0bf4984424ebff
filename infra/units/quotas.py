"""Per-team request quotas: one usage plan per environment, metered per team, and 429s that say when to retry.

Each team has its own API key in the plan (made by `cairn admin create-team`, see
cairn/adapters/aws/apigateway_quotas.py); the REST API takes keys from the authorizer (API key source
AUTHORIZER), which returns the caller's team key as `usageIdentifierKey`, and every authorized method
requires one. The plan's throttle (requests/s, burst) and daily quota then apply to each team on its own:
a team over its limits gets 429s, the others are not slowed. The stage's own throttle stays the ceiling
for all teams together.

Over a limit API Gateway answers with its THROTTLED or QUOTA_EXCEEDED gateway response; both carry
`Retry-After` and Cairn's error body, so the CLI, `cairn doctor` and the hooks' log can say "over quota,
retry after N s". Gateway responses are static: a throttled caller may retry after a second, and a team
whose daily quota is used up is told to retry in an hour (the quota renews at 00:00 UTC).
"""

from __future__ import annotations

import json

from aws_cdk import aws_apigateway as apigw
from constructs import Construct

from infra.config import EnvironmentConfig

THROTTLED_RETRY_AFTER_S = 1
QUOTA_RETRY_AFTER_S = 3600


def error_body(code: str, message: str) -> str:
    """Cairn's error JSON (cairn/api/errors.py), so clients read gateway answers like the app's own."""
    return json.dumps({"error": {"code": code, "message": message}})


class Quotas(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: EnvironmentConfig, rest_api: apigw.RestApi
    ) -> None:
        super().__init__(scope, construct_id)
        self.usage_plan = rest_api.add_usage_plan(
            "UsagePlan",
            name=f"{config.resource_prefix}-team",
            description="Each team's own limits: its API key is the authorizer's usageIdentifierKey",
            throttle=apigw.ThrottleSettings(
                rate_limit=config.team_rate_limit, burst_limit=config.team_burst_limit
            ),
            quota=apigw.QuotaSettings(limit=config.team_daily_quota, period=apigw.Period.DAY),
            api_stages=[apigw.UsagePlanPerApiStage(api=rest_api, stage=rest_api.deployment_stage)],
        )
        self.responses = [
            rest_api.add_gateway_response(
                "Throttled",
                type=apigw.ResponseType.THROTTLED,
                status_code="429",
                response_headers={"Retry-After": f"'{THROTTLED_RETRY_AFTER_S}'"},
                templates={
                    "application/json": error_body(
                        "throttled", "too many requests for this team; slow down and retry"
                    )
                },
            ),
            rest_api.add_gateway_response(
                "QuotaExceeded",
                type=apigw.ResponseType.QUOTA_EXCEEDED,
                status_code="429",
                response_headers={"Retry-After": f"'{QUOTA_RETRY_AFTER_S}'"},
                templates={
                    "application/json": error_body(
                        "over_quota", "this team's daily request quota is used up; it renews at 00:00 UTC"
                    )
                },
            ),
        ]

"""`TeamQuotas` as API Gateway usage-plan keys: one API key per team, in the environment's usage plan.

The key's value is `usage_key(team_id)`, which the authorizer returns as `usageIdentifierKey`; the usage
plan's throttle and quota then apply to each team on its own. Teams are created by an operator (`cairn
admin create-team` with the stack's settings), so the operator's credentials make the key: they need
`apigateway:POST` on `arn:aws:apigateway:<region>::/apikeys` and on
`arn:aws:apigateway:<region>::/usageplans/<UsagePlanId>/keys`, and `apigateway:GET` on the first (to find
a key made by an earlier, interrupted run). No Lambda is granted either.
"""

from __future__ import annotations

from typing import Any

from cairn.domain.errors import Unavailable
from cairn.domain.ports import usage_key


class ApiGatewayTeamQuotas:
    def __init__(
        self, usage_plan_id: str, prefix: str, client: Any = None, region: str | None = None
    ) -> None:
        self._plan = usage_plan_id
        self._prefix = prefix
        self._given = client
        self._region = region

    @property
    def _client(self) -> Any:
        # made on first use: the API Lambdas build this adapter at every cold start and never create teams
        if self._given is None:
            import boto3

            self._given = boto3.client("apigateway", region_name=self._region)
        return self._given

    def provision(self, team_id: str, team_name: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        name = f"{self._prefix}-{team_id}"
        try:
            key_id = (
                self._existing(name)
                or self._client.create_api_key(
                    name=name,
                    description=f"Cairn team {team_name[:100]} ({team_id}): its request quota",
                    enabled=True,
                    value=usage_key(team_id),
                    tags={"app": "cairn", "team": team_id},
                )["id"]
            )
            try:
                self._client.create_usage_plan_key(usagePlanId=self._plan, keyId=key_id, keyType="API_KEY")
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConflictException":  # already in the plan
                    raise
        except (BotoCoreError, ClientError) as exc:
            raise Unavailable(f"could not give team {team_id} its API Gateway quota key: {exc}") from exc

    def _existing(self, name: str) -> str | None:
        pages = self._client.get_paginator("get_api_keys").paginate(nameQuery=name, includeValues=False)
        for page in pages:
            for item in page.get("items", []):
                if item.get("name") == name:
                    return str(item["id"])
        return None

"""API Gateway REQUEST authorizer: an API key in, an IAM policy with the caller's team out.

API Gateway caches the answer per key for every route, so the policy allows the whole stage
(`<api>/<stage>/*/*`) and the route-level checks (scopes, team confinement) stay in the API itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cairn.domain.errors import Unauthenticated
from cairn.domain.ports import usage_key
from cairn.services.keys import KeyService


class Unauthorized(Exception):
    """API Gateway turns exactly this message into a 401 for the client."""

    def __init__(self) -> None:
        super().__init__("Unauthorized")


def presented_key(headers: Mapping[str, str] | None) -> str | None:
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    header = lowered.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return lowered.get("x-api-key")


def stage_wildcard(method_arn: str) -> str:
    """arn:aws:execute-api:<region>:<acct>:<api>/<stage>/<verb>/<path> -> .../<api>/<stage>/*/*"""
    prefix, _, rest = method_arn.partition(":execute-api:")
    parts = rest.split("/")
    if not prefix or len(parts) < 2:
        raise Unauthorized()
    return f"{prefix}:execute-api:{parts[0]}/{parts[1]}/*/*"


def authorize(event: Mapping[str, Any], keys: KeyService) -> dict[str, Any]:
    try:
        # read-only: the API function behind it records the key's use when it authenticates again
        caller = keys.authenticate(presented_key(event.get("headers")), record_use=False)
    except Unauthenticated as exc:
        raise Unauthorized() from exc
    return {
        "principalId": f"{caller.team_id}/{caller.member}",
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Action": "execute-api:Invoke",
                    "Effect": "Allow",
                    "Resource": stage_wildcard(str(event.get("methodArn", ""))),
                }
            ],
        },
        "context": {
            "team_id": caller.team_id,
            "member": caller.member,
            "key_id": caller.key_id,
            "scopes": ",".join(sorted(s.value for s in caller.scopes)),
            # API Gateway context values are strings: the projects as a JSON list, "" for every project
            "projects": "" if caller.projects is None else json.dumps(sorted(caller.projects)),
        },
        # the team's API Gateway key value: its usage plan meters and throttles the team on its own
        "usageIdentifierKey": usage_key(caller.team_id),
    }

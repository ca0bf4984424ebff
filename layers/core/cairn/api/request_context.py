"""Gives each request its id (and the agent, when the client names one) for the audit trail.

A pure ASGI middleware. The id is API Gateway's request id behind the gateway (Mangum puts the event on
the scope), so an audit entry can be matched to the access log and the Lambda's log lines; a client's
own `X-Request-Id` is taken when it is a plain token; otherwise a fresh one. Either way it is echoed in
the `X-Request-Id` response header. A client may name its agent in `X-Cairn-Agent`.
"""

from __future__ import annotations

import re

from cairn.domain.audit import in_request
from cairn.domain.ids import new_id

_TOKEN = re.compile(r"^[A-Za-z0-9._:-]{1,100}$")


def request_id_of(scope) -> str:
    event = scope.get("aws.event")
    if isinstance(event, dict):
        gateway_id = (event.get("requestContext") or {}).get("requestId")
        if isinstance(gateway_id, str) and _TOKEN.match(gateway_id):
            return gateway_id
    given = _header(scope, b"x-request-id")
    return given if given and _TOKEN.match(given) else new_id("req")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return None


class RequestContextMiddleware:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        agent = _header(scope, b"x-cairn-agent")
        agent = agent if agent and _TOKEN.match(agent) else None

        async def tagged(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with in_request(request_id, agent):
            await self.app(scope, receive, tagged)

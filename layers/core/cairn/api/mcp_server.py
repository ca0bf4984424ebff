"""The MCP endpoint at /mcp: Streamable HTTP, stateless, JSON responses, both protocol eras.

Each POST is served by a fresh stateless `StreamableHTTPSessionManager` of the `mcp` SDK, entered and
left within the request. A long-lived manager can be `run()` only once per instance, which breaks on
the second (warm) Lambda invocation under Mangum; a per-request one holds no state across requests
and costs one small task group. The SDK routes by the `MCP-Protocol-Version` header: handshake
versions (2025-06-18 and 2025-11-25: `initialize`, no `Mcp-Session-Id` issued) and 2026-07-28
(`server/discover`, per-request `_meta`).

Before the SDK sees a request this endpoint refuses foreign Host/Origin headers (DNS rebinding),
methods other than POST (there is no SSE stream to GET), and callers without a valid API key. The
caller's Principal and the services ride on the ASGI scope's state to the tool handlers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import mcp_types as types
from fastapi import APIRouter
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from cairn import __version__
from cairn.api.auth import presented_key
from cairn.api.mcp_errors import http_error_body, invalid_arguments, tool_failure, unknown_tool
from cairn.api.mcp_tools import ToolServices, ToolSpec, tool_definitions, tool_specs
from cairn.domain.errors import Unauthenticated
from cairn.domain.models import Principal

MCP_PATH = "/mcp"
_STATE_KEY = "cairn.mcp"

INSTRUCTIONS = (
    "Cairn is your team's shared memory across sessions and agents. Call `recall` before work the team "
    "may have done before; `remember` durable facts, decisions, conventions and procedures (one "
    "self-contained statement each, never secrets); `supersede` a memory that turned out wrong; leave a "
    "`handoff_save` when you stop mid-task and read `handoff_get` when you resume."
)


@dataclass(frozen=True, slots=True)
class McpCall:
    """What a tool handler needs about the HTTP request it runs in."""

    caller: Principal
    services: ToolServices

    @property
    def specs(self) -> dict[str, ToolSpec]:
        return {s.name: s for s in tool_specs(with_context=self.services.context is not None)}


def _call_of(ctx: Any) -> McpCall:
    request = getattr(ctx, "request", None)
    call = request.scope.get("state", {}).get(_STATE_KEY) if request is not None else None
    if not isinstance(call, McpCall):  # only reachable if the SDK stops passing the HTTP request through
        raise MCPError(code=INTERNAL_ERROR, message="request context is missing")
    return call


async def _list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    with_context = _call_of(ctx).services.context is not None
    return types.ListToolsResult(tools=list(tool_definitions(with_context)))


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    call = _call_of(ctx)
    spec = call.specs.get(params.name)
    if spec is None:
        raise unknown_tool(params.name)
    try:
        args = spec.args.model_validate(params.arguments or {})
    except ValidationError as exc:
        raise invalid_arguments(spec.name, exc) from None
    try:
        # services are synchronous (SQLite, boto3): keep them off the event loop
        payload = await anyio.to_thread.run_sync(spec.run, call.services, call.caller, args)
    except Exception as exc:
        return tool_failure(spec.name, exc)
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False, default=str))],
        structured_content=payload,
    )


SERVER: Server[Any] = Server(
    "cairn",
    version=__version__,
    title="Cairn",
    description="Team-shared, persistent memory for AI coding agents.",
    instructions=INSTRUCTIONS,
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


# --- the HTTP edge ------------------------------------------------------------------------------
def host_allowed(host: str | None, allowed: Sequence[str]) -> bool:
    """`*` allows any host (behind a gateway that sets Host); `name:*` any port; `*.suffix` subdomains."""
    if "*" in allowed:
        return True
    if not host:
        return False
    host = host.strip().lower()
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    for pattern in (p.strip().lower() for p in allowed):
        if host == pattern or name == pattern:
            return True
        if pattern.endswith(":*") and host.startswith(pattern[:-1]):
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


def _rpc_refusal(status: int, message: str, code: int = INVALID_REQUEST, **headers: str) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(
        json.dumps(body), status_code=status, media_type="application/json", headers=headers or None
    )


class McpEndpoint:
    """ASGI app for /mcp; the container comes from the FastAPI app that routes here."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        container = request.app.state.container
        refusal = self._refuse_origin(request, container.settings.allowed_hosts)
        if refusal is None and request.method != "POST":
            refusal = _rpc_refusal(
                405,
                f"{MCP_PATH} takes JSON-RPC messages by POST; this server offers no SSE stream",
                Allow="POST",
            )
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        try:
            caller = await anyio.to_thread.run_sync(container.keys.authenticate, presented_key(request))
        except Unauthenticated as exc:
            body = json.dumps(http_error_body(exc))
            headers = {"WWW-Authenticate": "Bearer"}
            await Response(body, 401, headers=headers, media_type="application/json")(scope, receive, send)
            return
        scope.setdefault("state", {})[_STATE_KEY] = McpCall(caller, ToolServices.from_container(container))
        manager = StreamableHTTPSessionManager(SERVER, stateless=True, json_response=True)
        async with manager.run():
            await manager.handle_request(scope, receive, send)

    @staticmethod
    def _refuse_origin(request: Request, allowed: Sequence[str]) -> Response | None:
        host = request.headers.get("host")
        if not host_allowed(host, allowed):
            return _rpc_refusal(
                421,
                f"Host {host!r} is not allowed for MCP here; "
                "add it to CAIRN_ALLOWED_HOSTS (or '*' behind a gateway)",
            )
        origin = request.headers.get("origin")
        if origin and origin != "null" and not host_allowed(urlsplit(origin).netloc, allowed):
            return _rpc_refusal(403, f"Origin {origin!r} is not allowed for MCP here")
        return None


mcp_router = APIRouter()
mcp_router.routes.append(Route(MCP_PATH, McpEndpoint(), include_in_schema=False))

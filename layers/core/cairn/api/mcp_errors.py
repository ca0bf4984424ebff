"""The one map from errors to MCP answers: JSON-RPC errors by domain error type, or `isError` results.

Protocol-level problems (bad arguments, a memory that does not exist for this caller, a key that may
not do this) become JSON-RPC errors, so a client can tell them apart by code. Failures while doing the
work (a dependency down, a conflict) come back as a tool result with `isError: true`, which the MCP
spec asks for so the model can read the message and adapt. Unexpected exceptions are logged and
answered with a generic message that leaks nothing.

Application codes sit outside JSON-RPC's reserved -32768..-32000 band, so they can never collide
with codes MCP itself assigns there; the last three digits echo the matching HTTP status.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

from cairn.domain import errors as e

log = logging.getLogger("cairn.api.mcp")

UNAUTHENTICATED = -31401
FORBIDDEN = -31403
NOT_FOUND = -31404

RPC_CODE_BY_ERROR: dict[type[e.CairnError], int] = {
    e.InvalidInput: INVALID_PARAMS,
    e.Unauthenticated: UNAUTHENTICATED,
    e.Forbidden: FORBIDDEN,
    e.OutsideProjects: FORBIDDEN,
    e.NotFound: NOT_FOUND,
}


def rpc_code_for(exc: e.CairnError) -> int | None:
    for cls in type(exc).__mro__:
        if cls in RPC_CODE_BY_ERROR:
            return RPC_CODE_BY_ERROR[cls]  # type: ignore[index]
    return None


def error_data(exc: e.CairnError) -> dict[str, Any]:
    return {"code": exc.code, **({"details": exc.details} if exc.details else {})}


def invalid_arguments(tool: str, exc: ValidationError) -> MCPError:
    """Pydantic's complaints about tool arguments, as one readable -32602 error."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        msg = "unknown argument" if err.get("type") == "extra_forbidden" else err.get("msg", "invalid")
        problems.append({"field": where, "message": msg})
    summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems[:5])
    return MCPError(
        code=INVALID_PARAMS,
        message=f"invalid arguments for {tool}: {summary}",
        data={"code": "invalid_input", "problems": problems},
    )


def unknown_tool(name: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=f"unknown tool {name!r}", data={"code": "unknown_tool"})


def tool_failure(tool: str, exc: Exception) -> types.CallToolResult:
    """Map an exception raised by a tool: raises MCPError for protocol errors, returns an isError result."""
    if isinstance(exc, e.CairnError):
        code = rpc_code_for(exc)
        if code is not None:
            raise MCPError(code=code, message=exc.message, data=error_data(exc)) from exc
        return _error_result({"error": error_data(exc) | {"message": exc.message}})
    log.exception("tool %s failed", tool)
    return _error_result({"error": {"code": "internal", "message": f"{tool} failed with an internal error"}})


def http_error_body(exc: e.CairnError) -> dict[str, Any]:
    """A JSON-RPC error with no id, for refusals made before the JSON-RPC request is read (auth)."""
    code = rpc_code_for(exc) or UNAUTHENTICATED
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": exc.message, "data": error_data(exc)},
    }


def _error_result(payload: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=True,
    )

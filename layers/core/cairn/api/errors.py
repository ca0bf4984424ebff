"""The one map from errors to HTTP responses: domain errors by type, validation errors, and the rest.

Every error body has the same shape: {"error": {"code", "message", "details"}}. Unexpected exceptions
are logged and answered with a generic 500 that leaks nothing.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from cairn.domain import errors as e

log = logging.getLogger("cairn.api")

STATUS_BY_ERROR: dict[type[e.CairnError], int] = {
    e.InvalidInput: 400,
    e.Unauthenticated: 401,
    e.Forbidden: 403,
    e.OutsideProjects: 403,  # a project named outside the key's: 403 whether it exists or not
    e.NotFound: 404,
    e.Conflict: 409,
    e.PayloadTooLarge: 413,
    e.Unavailable: 503,
}


class ErrorDetail(BaseModel):
    code: str = Field(description="A stable machine-readable name, e.g. not_found, invalid_request.")
    message: str = Field(description="What went wrong, for a person.")
    details: dict[str, Any] = Field(default_factory=dict, description="Structured context, if any.")


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorDetail


# documented on every operation (OpenAPI): what any route may answer besides its success
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Bad request: malformed JSON or an invalid value."},
    401: {"model": ErrorBody, "description": "No API key, or an unknown, revoked or expired one."},
    403: {
        "model": ErrorBody,
        "description": "The key lacks the scope, or the project is not one of its own.",
    },
    404: {"model": ErrorBody, "description": "Not found (or not visible to the key's team)."},
    409: {"model": ErrorBody, "description": "Conflicts with the current state."},
    413: {"model": ErrorBody, "description": "The request body is larger than the server accepts."},
    422: {"model": ErrorBody, "description": "The request does not match the schema."},
    503: {"model": ErrorBody, "description": "A dependency (search, storage, pipeline) is unavailable."},
}


# the same, by reference, for a route whose own response class is not JSON (FastAPI would otherwise
# document its errors in that media type); ErrorBody is in the components through the other routes
JSON_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {
        "description": spec["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for status, spec in ERROR_RESPONSES.items()
}


def status_for(exc: e.CairnError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]  # type: ignore[index]
    return 500


def error_body(code: str, message: str, details: object | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _validation_response(exc: RequestValidationError) -> JSONResponse:
    problems = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            return JSONResponse(error_body("invalid_json", "the request body is not valid JSON"), 400)
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
        problems.append({"field": where, "message": msg})
    summary = "; ".join(f"{p['field'] or 'body'}: {p['message']}" for p in problems[:5])
    return JSONResponse(error_body("invalid_request", summary, {"problems": problems}), 422)


def _allowed_methods(request: Request, routed: str) -> list[str]:
    """Every method served at this path. The router names only the methods of the one route it tried,
    and a path is often split over several (GET and POST /v1/memories), so the OpenAPI paths (cached
    by FastAPI after the first call) are matched too."""
    methods = {m.strip().upper() for m in routed.split(",") if m.strip()}
    path = request.url.path
    for template, operations in request.app.openapi().get("paths", {}).items():
        if _path_regex(template).match(path):
            methods |= {m.upper() for m in operations if m.upper() in _HTTP_METHODS}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


@lru_cache(maxsize=512)
def _path_regex(template: str) -> re.Pattern[str]:
    return compile_path(template)[0]


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(e.CairnError)
    async def _domain(_: Request, exc: e.CairnError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, e.Unauthenticated) else None
        return JSONResponse(error_body(exc.code, exc.message, exc.details), status_for(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(request, headers.get("Allow", "")))
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code, headers=headers or None)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(error_body("internal", "internal error"), 500)

"""The one map from errors to HTTP responses: domain errors by type, validation errors, and the rest.

Every error body has the same shape: {"error": {"code", "message", "details"}}. Unexpected exceptions
are logged and answered with a generic 500 that leaks nothing.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from cairn.domain import errors as e

log = logging.getLogger("cairn.api")

STATUS_BY_ERROR: dict[type[e.CairnError], int] = {
    e.InvalidInput: 400,
    e.Unauthenticated: 401,
    e.Forbidden: 403,
    e.NotFound: 404,
    e.Conflict: 409,
    e.PayloadTooLarge: 413,
    e.Unavailable: 503,
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


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(e.CairnError)
    async def _domain(_: Request, exc: e.CairnError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, e.Unauthenticated) else None
        return JSONResponse(error_body(exc.code, exc.message, exc.details), status_for(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(error_body("internal", "internal error"), 500)

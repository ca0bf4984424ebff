"""The FastAPI app factory: one app for the embedded server, the two API Lambdas (via Mangum) and tests.

Locally one app serves everything. In AWS the REST/hook routes and `/mcp` run in separate functions,
so a hook's cold start does not import the MCP SDK (about a second of it) and MCP traffic scales on
its own; each function builds the app with only its surface.
"""

from __future__ import annotations

from fastapi import FastAPI

from cairn import __version__
from cairn.api.docs import install_docs
from cairn.api.errors import ERROR_RESPONSES, install_error_handlers
from cairn.api.limits import BodySizeLimit
from cairn.api.request_context import RequestContextMiddleware
from cairn.api.request_log import RequestLog
from cairn.bootstrap import Container


def create_app(container: Container, *, rest: bool = True, mcp: bool = True) -> FastAPI:
    app = FastAPI(
        title="Cairn",
        version=__version__,
        description="Team-shared, persistent memory for AI coding agents.",
        docs_url=None,  # served from the package by install_docs: FastAPI's own load from a CDN
        redoc_url=None,
    )
    app.state.container = container
    install_error_handlers(app)
    if rest:
        from cairn.api.routes import router
        from cairn.api.routes_audit import router as audit_router
        from cairn.api.routes_context import router as context_router
        from cairn.api.routes_digest import router as digest_router
        from cairn.api.routes_transfers import router as transfers_router
        from cairn.api.routes_uploads import router as uploads_router
        from cairn.web import install_ui

        app.include_router(router, responses=ERROR_RESPONSES)
        app.include_router(context_router, responses=ERROR_RESPONSES)
        app.include_router(digest_router, responses=ERROR_RESPONSES)
        app.include_router(audit_router, responses=ERROR_RESPONSES)
        app.include_router(uploads_router, responses=ERROR_RESPONSES)
        app.include_router(transfers_router, responses=ERROR_RESPONSES)
        install_docs(app)
        install_ui(app)  # the web UI at / and /ui/..., over the same services
    if mcp:
        from cairn.api.mcp_server import mcp_router

        app.include_router(mcp_router)
    app.add_middleware(
        BodySizeLimit,
        max_bytes=container.settings.max_body_bytes,
        overrides={"/v1/uploads/": container.settings.max_upload_bytes},
    )
    app.add_middleware(RequestContextMiddleware)  # the request id every audit entry carries
    app.add_middleware(RequestLog)  # outermost: logs failures of every layer, one line each
    return app

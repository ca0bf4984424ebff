"""`/docs`: Swagger UI served from files shipped in the package, so the API docs work offline.

FastAPI's own `/docs` and `/redoc` load their scripts from a CDN and are blank without one; the app
turns them off and this serves Swagger UI (vendored under `api/static/swagger-ui`, see its README)
instead. URLs honour the ASGI root path, as FastAPI's do, so the page also works behind a stage prefix.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse

from cairn.domain.errors import NotFound

DOCS_PATH = "/docs"
ASSETS = Path(__file__).parent / "static" / "swagger-ui"
_SERVED = {  # the only files the page needs; nothing else under static/ is reachable
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


def install_docs(app: FastAPI) -> None:
    oauth2_redirect = f"{DOCS_PATH}/oauth2-redirect"

    @app.get(DOCS_PATH, include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - API docs",
            swagger_js_url=f"{root}{DOCS_PATH}/static/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_PATH}/static/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_PATH}/static/favicon-32x32.png",
            oauth2_redirect_url=root + oauth2_redirect,
            swagger_ui_parameters={"persistAuthorization": True},
        )

    @app.get(oauth2_redirect, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(DOCS_PATH + "/static/{name}", include_in_schema=False)
    def swagger_ui_asset(name: str) -> FileResponse:
        media_type = _SERVED.get(name)
        if media_type is None:
            raise NotFound(f"no docs asset {name}")
        return FileResponse(
            ASSETS / name, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"}
        )

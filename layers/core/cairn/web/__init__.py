"""The web UI: server-rendered pages at `/` and `/ui/...`, served by the API app in both modes.

Every page goes through the same services and team checks as the REST API (see `cairn.web.routes`);
sign-in exchanges an API key for a signed session cookie (`cairn.web.security`). The templates, the
stylesheet and the one small script ship inside the package: nothing is loaded from elsewhere.
"""

from __future__ import annotations

from fastapi import FastAPI


def install_ui(app: FastAPI) -> None:
    from cairn.web.routes import router

    app.include_router(router)

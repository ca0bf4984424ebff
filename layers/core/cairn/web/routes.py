"""The web UI's routes: one router over the pages, each page (or area) in its own module.

Shared plumbing (the caller, forms, rendering, errors as pages) lives in `cairn.web.common`.
"""

from __future__ import annotations

from fastapi import APIRouter

from cairn.web import context, digest, keys, memories, overview, reindex, sessions, signin

router = APIRouter(include_in_schema=False)
for page_module in (signin, overview, memories, sessions, context, digest, keys, reindex):
    router.include_router(page_module.router)

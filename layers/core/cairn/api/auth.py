"""The caller's identity: an API key from `Authorization: Bearer` or `X-API-Key`, resolved to a Principal."""

from __future__ import annotations

from fastapi import Request

from cairn.domain.models import Principal


def presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return request.headers.get("x-api-key")


def principal(request: Request) -> Principal:
    """FastAPI dependency: every authenticated route gets the caller's team from here and nowhere else."""
    return request.app.state.container.keys.authenticate(presented_key(request))

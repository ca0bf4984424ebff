"""The caller's identity: an API key from `Authorization: Bearer` or `X-API-Key`, resolved to a Principal.

The two FastAPI security schemes only document the choice (OpenAPI `securitySchemes`, the Authorize
button of /docs); they never refuse anything themselves, so every missing or bad key gets the same
401 from `KeyService.authenticate`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from cairn.domain.models import Principal

bearer_scheme = HTTPBearer(
    auto_error=False, bearerFormat="cairn API key", description="`Authorization: Bearer cairn_...`"
)
api_key_scheme = APIKeyHeader(name="X-API-Key", auto_error=False, description="`X-API-Key: cairn_...`")


def presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return request.headers.get("x-api-key")


def principal(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)] = None,
    _api_key: Annotated[str | None, Depends(api_key_scheme)] = None,
) -> Principal:
    """FastAPI dependency: every authenticated route gets the caller's team from here and nowhere else."""
    return request.app.state.container.keys.authenticate(presented_key(request))

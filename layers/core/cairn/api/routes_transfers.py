"""Whole-team export and import staged in the blob store (`services/transfers.py`).

`POST /v1/admin/exports` starts an export; `GET /v1/admin/exports/{id}` says how far it got and, once
done, gives a short-lived URL of the file. `POST /v1/admin/imports` grants an upload of the file;
`POST /v1/admin/imports/{id}/start` starts the import of what was uploaded; `GET /v1/admin/imports/{id}`
says how far it got. `GET /v1/downloads/{token}` serves a finished export locally (S3 does in AWS).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field

from cairn.api.auth import principal
from cairn.domain.errors import InvalidInput, NotFound, Unavailable
from cairn.domain.models import Principal, utcnow
from cairn.services.transfers import CONTENT_TYPE, Transfer, TransferService

router = APIRouter(prefix="/v1")
Caller = Annotated[Principal, Depends(principal)]


class ImportIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bytes: int = Field(ge=1)


def _transfers(request: Request) -> TransferService:
    transfers = request.app.state.container.transfers
    if transfers is None:
        raise Unavailable("exports and imports are not configured on this server")
    return transfers


def _out(transfer: Transfer, url: str | None = None) -> dict:
    out = transfer.to_json()
    out.pop("member", None)
    out.pop("team_id", None)
    if url is not None:
        out["url"] = url
    return out


@router.post("/admin/exports", status_code=202)
def start_export(caller: Caller, request: Request) -> dict:
    return _out(_transfers(request).start_export(caller))


@router.get("/admin/exports/{transfer_id}")
def export_status(transfer_id: str, caller: Caller, request: Request) -> dict:
    transfer, url = _transfers(request).status(caller, transfer_id)
    if transfer.kind != "export":
        raise NotFound("no such export", transfer_id=transfer_id)
    return _out(transfer, url)


@router.post("/admin/imports", status_code=201)
def request_import(body: ImportIn, caller: Caller, request: Request) -> dict:
    transfer, target = _transfers(request).request_import(caller, body.bytes)
    upload = {
        "url": target.url,
        "method": target.method,
        "fields": target.fields,
        "headers": target.headers,
        "max_bytes": target.max_bytes,
        "expires_at": target.expires_at.isoformat(),
    }
    return {**_out(transfer), "upload": upload}


@router.post("/admin/imports/{transfer_id}/start", status_code=202)
def start_import(transfer_id: str, caller: Caller, request: Request) -> dict:
    return _out(_transfers(request).start_import(caller, transfer_id))


@router.get("/admin/imports/{transfer_id}")
def import_status(transfer_id: str, caller: Caller, request: Request) -> dict:
    transfer, _ = _transfers(request).status(caller, transfer_id)
    if transfer.kind != "import":
        raise NotFound("no such import", transfer_id=transfer_id)
    return _out(transfer)


@router.get("/downloads/{token}")
def download(token: str, request: Request) -> FileResponse:
    """The local stand-in for an S3 presigned GET: the signed token names the one object it reads."""
    blobs = request.app.state.container.blobs
    verify = getattr(blobs, "verify_download", None)
    if verify is None:  # S3 serves downloads itself; this route exists only for the local blob store
        raise NotFound("this server does not serve downloads directly")
    key = verify(token, utcnow())
    if "/transfers/" not in key:
        raise InvalidInput("only transfer files are downloadable")
    return FileResponse(blobs.path_of(key), media_type=CONTENT_TYPE, filename=key.rsplit("/", 1)[-1])

"""Client side of a transcript upload: redact, gzip, ask the API for a presigned target, send the bytes.

Used by the capture worker and by `cairn ingest`, so both go through exactly the same path. The API key
goes only to the Cairn API; the presigned URL (S3 or the local server) gets the bytes and its own fields.
"""

from __future__ import annotations

import contextlib
import gzip
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from cairn.redaction import redact_bytes_jsonl

CONTENT_TYPE = "application/gzip"


class UploadRefused(Exception):
    """The server refused the upload for good (bad request, forbidden); retrying will not help."""


class UploadUnavailable(Exception):
    """The server or the storage could not be reached, or failed; try again later."""


class OverQuota(UploadUnavailable):
    """HTTP 429: the team is over its quota (or throttled); `retry_after` is the server's wait, if given."""

    def __init__(self, message: str, retry_after: int | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class PreparedPart:
    data: bytes  # gzip of the redacted JSONL
    redactions: dict[str, int]


def prepare(raw_jsonl: bytes) -> PreparedPart:
    """Redact secrets inside every string of every line, then gzip (mtime 0: same input, same bytes)."""
    redacted, counts = redact_bytes_jsonl(raw_jsonl)
    return PreparedPart(gzip.compress(redacted, compresslevel=6, mtime=0), counts)


def upload_part(
    url: str,
    api_key: str | None,
    *,
    agent: str,
    session_id: str,
    project: str,
    part: int,
    data: bytes,
    timeout: float = 30.0,
    transport: httpx.BaseTransport | None = None,
    started_at: float | None = None,
) -> dict[str, Any]:
    """Send one prepared (gzipped) part; returns the presigned target's description. `started_at` (epoch
    seconds) dates a session sent after it ended by when it ran."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body: dict[str, Any] = {
        "agent": agent,
        "session_id": session_id,
        "project": project,
        "part": part,
        "bytes": len(data),
        "content_type": CONTENT_TYPE,
    }
    if started_at:
        body["started_at"] = datetime.fromtimestamp(started_at, UTC).isoformat()
    try:
        with httpx.Client(
            base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        ) as api:
            resp = api.post("/v1/uploads", json=body)
            if resp.status_code == 422 and "started_at" in body:  # a server from before the field
                resp = api.post("/v1/uploads", json={k: v for k, v in body.items() if k != "started_at"})
            _check(resp)
            target = resp.json()
        with httpx.Client(timeout=timeout, transport=transport) as storage:
            if target["method"] == "PUT":
                sent = storage.put(target["url"], content=data, headers=target.get("headers") or {})
            else:  # S3 presigned POST: the policy fields first, the file last
                sent = storage.post(
                    target["url"],
                    data=target.get("fields") or {},
                    files={"file": ("transcript.jsonl.gz", data, CONTENT_TYPE)},
                )
            _check(sent)
    except httpx.HTTPError as exc:
        raise UploadUnavailable(str(exc)) from exc
    return target


def _check(resp: httpx.Response) -> None:
    if resp.status_code < 400:
        return
    message = resp.text[:300]
    with contextlib.suppress(ValueError, KeyError, TypeError):
        message = resp.json()["error"]["message"]
    if resp.status_code == 429:  # the team over its quota: the part stays queued for a later run
        from cairn.capture.quota import over_quota_line, retry_after_seconds

        wait = retry_after_seconds(resp.headers.get("Retry-After"))
        raise OverQuota(f"429: {over_quota_line(wait)}: {message}", wait)
    if resp.status_code == 408 or resp.status_code >= 500:
        raise UploadUnavailable(f"{resp.status_code}: {message}")
    raise UploadRefused(f"{resp.status_code}: {message}")

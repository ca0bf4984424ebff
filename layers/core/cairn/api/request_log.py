"""One log line per failed request: method, path, status and the error body's one-line reason.

A pure ASGI middleware: it watches the response start for the status and, for errors only, keeps the
first bytes of the body to read `{"error": {"message"}}` from. Successful requests are not logged.
"""

from __future__ import annotations

import json
import logging

log = logging.getLogger("cairn.requests")

_KEEP_BYTES = 2048


def reason_of(body: bytes) -> str:
    """The error body's message on one line, else the start of the body as text."""
    try:
        doc = json.loads(body)
        message = doc["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    return " ".join(str(message).split())[:200] or "-"


class RequestLog:
    def __init__(self, app, logger: logging.Logger = log) -> None:
        self.app = app
        self.log = logger

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0
        body = bytearray()

        async def watch(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status >= 400 and len(body) < _KEEP_BYTES:
                body.extend(message.get("body", b"")[: _KEEP_BYTES - len(body)])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            self.log.warning("%s %s -> 500 unhandled error", scope["method"], scope["path"])
            raise
        if status >= 400:
            self.log.warning("%s %s -> %d %s", scope["method"], scope["path"], status, reason_of(bytes(body)))

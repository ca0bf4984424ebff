"""ASGI middleware that refuses request bodies over a size cap before they are read into memory."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.api.errors import error_body


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, overrides: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.overrides = overrides or {}  # path prefix -> cap (transcript uploads are larger)

    def _cap(self, path: str) -> int:
        for prefix, cap in self.overrides.items():
            if path.startswith(prefix):
                return cap
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self._cap(scope.get("path", ""))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > cap
            except ValueError:
                await _reject(send, 400, "bad_request", "Content-Length is not a number")
                return
            if too_big:
                await _reject(send, 413, "payload_too_large", f"request body is larger than {cap} bytes")
                return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _reject(send, 413, "payload_too_large", f"request body is larger than {cap} bytes")


class _TooLarge(Exception):
    pass


async def _reject(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

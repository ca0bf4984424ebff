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
        if refusal := _declared_refusal(scope, cap):
            await _reject(send, *refusal)
            return
        seen = 0
        exceeded = False
        started = False

        async def counted() -> Message:
            nonlocal seen, exceeded
            if exceeded:  # the app asks again after refusing to read on: the client is as good as gone
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    exceeded = True
                    raise _TooLarge
            return message

        async def guarded(message: Message) -> None:
            # FastAPI turns any error while reading a body into its own 400 ("error parsing the body");
            # once the cap is passed whatever the app answers is dropped, and the 413 below goes instead
            nonlocal started
            if exceeded and not started:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:  # _TooLarge itself, or whatever the app made of it
            if not exceeded:
                raise
        if exceeded and not started:
            await _reject(send, 413, "payload_too_large", f"request body is larger than {cap} bytes")


class _TooLarge(Exception):
    pass


async def _reject(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _declared_refusal(scope: Scope, cap: int) -> tuple[int, str, str] | None:
    """The answer to a request whose declared Content-Length is no number or over the cap, if it is."""
    declared = dict(scope.get("headers") or []).get(b"content-length")
    if declared is None:
        return None
    try:
        too_big = int(declared) > cap
    except ValueError:
        return 400, "bad_request", "Content-Length is not a number"
    return (413, "payload_too_large", f"request body is larger than {cap} bytes") if too_big else None

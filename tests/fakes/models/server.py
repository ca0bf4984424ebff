"""The HTTP side: routing by path to a provider module, recording, and the reply script."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY_TEXT = "Noted, thanks."


@dataclass(frozen=True)
class ToolCall:
    """Call the first offered tool whose name is `name` or ends with `_<name>` (MCP tools get prefixes)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    must_contain: str = ""  # e.g. "cairn": only a tool whose full name holds this (case-insensitive)

    def matches(self, offered: str) -> bool:
        if self.must_contain and self.must_contain.lower() not in offered.lower():
            return False
        return offered == self.name or offered.endswith(tuple(sep + self.name for sep in "_.-/"))


@dataclass(frozen=True)
class Reply:
    text: str = REPLY_TEXT
    tool: str | None = None  # the offered tool's full name when calling one
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = "call_1"


@dataclass(frozen=True)
class Turn:
    """What a provider module reads out of a request body."""

    tools: tuple[str, ...] = ()
    after_tool_result: bool = False
    stream: bool = True
    wants_json: bool = False  # the client asked for a JSON object (Gemini's internal helpers)
    tool_output: str | None = None  # what the tool the model last called returned (JSON-encoded)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text
    provider: str | None = None
    reply: Reply | None = None
    tool_output: str | None = None  # the tool result this request carries back to the model

    @property
    def text(self) -> str:
        """The body as one string (JSON-encoded, non-ASCII kept) for `in` checks."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)


class FakeModelServer:
    def __init__(self, script: list[ToolCall] | None = None) -> None:
        self.requests: list[Recorded] = []
        self.script: list[ToolCall] = list(script or [])
        self._lock = threading.Lock()
        self._count = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- what tests read ----------------------------------------------------------------------
    def model_requests(self, provider: str | None = None) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.provider and (provider is None or r.provider == provider)]

    def saw(self, phrase: str, provider: str | None = None) -> bool:
        return any(phrase in r.text for r in self.model_requests(provider))

    # --- the script ---------------------------------------------------------------------------
    def decide(self, turn: Turn) -> Reply:
        with self._lock:
            self._count += 1
            if not turn.after_tool_result:
                for i, call in enumerate(self.script):
                    offered = next((t for t in turn.tools if call.matches(t)), None)
                    if offered:
                        del self.script[i]
                        return Reply(tool=offered, arguments=call.arguments, call_id=f"call_{self._count}")
        return Reply()

    def record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)


def _handler(server: FakeModelServer):
    from tests.fakes.models import anthropic, chat, gemini, responses

    def provider_for(path: str):
        route = path.split("?", 1)[0]
        if route.endswith("/messages/count_tokens"):
            return None
        if route.endswith("/messages"):
            return anthropic
        if route.endswith("/responses"):
            return responses
        if route.endswith("/chat/completions"):
            return chat
        if ":generateContent" in route or ":streamGenerateContent" in route:
            return gemini
        return None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = _read_chunked(self.rfile)
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self) -> None:  # Claude Code probes `HEAD /` first
            self._send(200, b"")

        def do_GET(self) -> None:
            server.record(Recorded("GET", self.path, dict(self.headers), None))
            if self.path.split("?", 1)[0].endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake-model"}]}).encode())
            else:
                self._send(200, b"{}")

        def do_POST(self) -> None:
            body = self._body()
            module = provider_for(self.path)
            rec = Recorded("POST", self.path, dict(self.headers), body)
            if module is None:
                server.record(rec)
                if self.path.split("?", 1)[0].endswith("count_tokens"):
                    self._send(200, b'{"input_tokens": 100}')
                else:
                    self._send(200, b'{"totalTokens": 100}')  # Gemini countTokens and the like
                return
            turn = module.read_turn(self.path, body if isinstance(body, dict) else {})
            reply = server.decide(turn)
            rec.provider, rec.reply, rec.tool_output = module.NAME, reply, turn.tool_output
            server.record(rec)
            if turn.stream:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in module.stream(reply, turn):
                    self.wfile.write(chunk.encode())
                    self.wfile.flush()
                self.close_connection = True
            else:
                self._send(200, json.dumps(module.plain(reply, turn)).encode())

    return Handler


def _read_chunked(rfile) -> bytes:
    out = b""
    while True:
        size = int(rfile.readline().strip() or b"0", 16)
        if size == 0:
            rfile.readline()
            return out
        out += rfile.read(size)
        rfile.readline()


def sse(event: str | None, data: Any) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"

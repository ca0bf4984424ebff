"""A hand-written Bedrock Runtime stand-in on 127.0.0.1 (an LLM has no real local equivalent).

It speaks the Converse API as boto3's `bedrock-runtime` client calls it: `POST /model/<modelId>/converse`
with a SigV4-signed JSON body, answered with `output.message.content[].text`, `stopReason`, `usage` and
`metrics`. Point a client at it with `endpoint_url`, or every client of the process with
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (what the pipeline's extractor picks up). Unsigned requests, or ones
signed for another service, get Bedrock's 403 AccessDeniedException; a model it was not told to serve
gets the 400 ValidationException Bedrock answers for an unknown model id.

`answer(system, user) -> str` makes the model's text; every request is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


@dataclass
class ConverseRequest:
    model_id: str
    body: dict[str, Any]
    authorization: str

    @property
    def system(self) -> str:
        return "".join(b.get("text", "") for b in self.body.get("system", []))

    @property
    def user(self) -> str:
        return "".join(c.get("text", "") for m in self.body.get("messages", []) for c in m.get("content", []))


@dataclass
class FakeBedrock:
    models: tuple[str, ...]
    answer: Callable[[str, str], str]
    requests: list[ConverseRequest] = field(default_factory=list)
    url: str = ""


def _error(handler: BaseHTTPRequestHandler, status: int, kind: str, message: str) -> None:
    body = json.dumps({"message": message}).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("x-amzn-ErrorType", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def fake_bedrock(models: tuple[str, ...], answer: Callable[[str, str], str]) -> Iterator[FakeBedrock]:
    fake = FakeBedrock(models=models, answer=answer)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = self.path.split("/")
            if len(parts) != 4 or parts[1] != "model" or parts[3] != "converse":
                return _error(self, 404, "UnknownOperationException", f"no such operation {self.path}")
            auth = self.headers.get("Authorization") or ""
            if not auth.startswith("AWS4-HMAC-SHA256 ") or "/bedrock/aws4_request" not in auth:
                return _error(self, 403, "AccessDeniedException", "request not signed for bedrock")
            model_id = unquote(parts[2])
            if model_id not in fake.models:
                return _error(self, 400, "ValidationException", "The provided model identifier is invalid.")
            request = ConverseRequest(model_id, json.loads(raw or b"{}"), auth)
            with lock:
                fake.requests.append(request)
            text = fake.answer(request.system, request.user)
            body = json.dumps(
                {
                    "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                    "stopReason": "end_turn",
                    "usage": {
                        "inputTokens": len(request.user) // 4,
                        "outputTokens": len(text) // 4,
                        "totalTokens": (len(request.user) + len(text)) // 4,
                    },
                    "metrics": {"latencyMs": 1},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()

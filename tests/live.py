"""The app on a real loopback socket, in a thread: for clients that speak HTTP (the CLI, the MCP client,
a browser). Shared by the integration and UI fixtures and the screenshot script, with the flags
headless Chromium needs here."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

# headless Chromium on a closed network: without the background-networking flags it keeps trying to
# reach Google's hosts (platform facts); a fresh profile each launch
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(app, port: int, ready_s: float = 15.0) -> Iterator[str]:
    """Serve `app` on 127.0.0.1:`port` until the block ends; yields its URL once /v1/health answers."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/v1/health", timeout=0.5).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=5)

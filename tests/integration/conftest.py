"""Fixtures: a real embedded container (SQLite file + ONNX embedder) behind the real FastAPI app."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.settings import Settings
from fastapi.testclient import TestClient


@dataclass
class TeamKeys:
    team_id: str
    admin: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin}"}


@pytest.fixture
def container(tmp_path):
    c = build_container(Settings(mode="local", home=tmp_path / "home"))
    yield c
    c.close()


@pytest.fixture
def api(container):
    with TestClient(create_app(container)) as client:
        yield client


def _team(container, name: str) -> TeamKeys:
    team, _, secret = container.keys.create_team(name, f"{name}-admin")
    return TeamKeys(team.id, secret)


@pytest.fixture
def team_a(container) -> TeamKeys:
    return _team(container, "alpha")


@pytest.fixture
def team_b(container) -> TeamKeys:
    return _team(container, "beta")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_server(container):
    """The app on a real socket, for clients that speak HTTP (the CLI, the MCP client)."""
    port = _free_port()
    container.settings.port = port
    server = uvicorn.Server(
        uvicorn.Config(create_app(container), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/v1/health", timeout=0.5).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(timeout=5)

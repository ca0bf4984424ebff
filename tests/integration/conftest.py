"""Fixtures: a real embedded container (SQLite file + ONNX embedder) behind the real FastAPI app."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.integration.capture_helpers import Served
from tests.live import free_port, serving


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


@pytest.fixture
def live_server(container):
    """The app on a real socket, for clients that speak HTTP (the CLI, the MCP client)."""
    port = free_port()
    container.settings.port = port
    with serving(create_app(container), port, ready_s=10) as url:
        yield url


@pytest.fixture
def server(tmp_path):
    """A real embedded server on a socket, with a team and its admin key (`Served`), for one test."""
    served = Served(tmp_path / "server-home")
    yield served
    served.close()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """The same, shared by a module's tests (read-only ones, or ones that make their own data)."""
    served = Served(tmp_path_factory.mktemp("served") / "home")
    yield served
    served.close()

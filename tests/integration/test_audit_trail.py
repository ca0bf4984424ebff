"""Every mutating REST route and MCP tool leaves an audit entry: enumerated, so a new one without fails.

The REST routes come from the OpenAPI document (every POST, PUT, PATCH and DELETE), the tools from the
server's own `list_tools` (every tool not annotated read-only). Each is called validly; the team's trail
must grow, with the REST call's `X-Request-Id` on the new entries. A route or tool this file does not
know fails the test until it gets a call here (and an entry in its service), or joins READ_ONLY.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from cairn.api.app import create_app
from cairn.domain.audit import AuditAction
from cairn.domain.models import KeyScope, MemoryKind
from cairn.services.handoffs import HandoffNote, HandoffService
from cairn.services.memories import NewMemory
from fastapi.testclient import TestClient

from tests.integration.pipeline_helpers import claude_transcript, learn
from tests.integration.test_mcp_tools import mcp_session

pytestmark = pytest.mark.integration

PROJECT = "github.com/acme/shop"
# mutating by method, reading by meaning: these change nothing and must record nothing
READ_ONLY_ROUTES = {("POST", "/v1/search")}


class World:
    """A team with memories to act on, an admin key, and the REST client."""

    def __init__(self, container, client: TestClient) -> None:
        self.c = container
        self.client = client
        team, key, self.secret = container.keys.create_team("alpha", "ana")
        self.team_id = team.id
        self.admin = container.keys.authenticate(self.secret)
        self.headers = {"Authorization": f"Bearer {self.secret}"}

    def memory(self, content: str = "the build uses gradle", kind: str = "fact") -> str:
        new = NewMemory(kind=MemoryKind(kind), content=content, project=PROJECT)
        return self.c.memories.remember(self.admin, new, dedup=False).id

    def trail(self) -> list:
        return list(self.c.audit.team(self.admin, limit=500).items)

    def call(self, method: str, path: str, **kw: Any):
        response = self.client.request(method, path, headers={**self.headers, **kw.pop("headers", {})}, **kw)
        assert response.status_code < 300, (method, path, response.status_code, response.text)
        return response


def _upload_grant(w: World, session_id: str = "sess-audit-1"):
    body = {"agent": "codex", "session_id": session_id, "project": PROJECT, "part": 1, "bytes": 200}
    return w.call("POST", "/v1/uploads", json=body)


def _put_upload(w: World):
    grant = _upload_grant(w, "sess-audit-2").json()
    line = json.dumps({"type": "session_meta", "payload": {"id": "x"}}).encode()
    path = grant["url"].split("://", 1)[1].split("/", 1)[1]
    return w.call(
        "PUT", "/" + path, content=gzip.compress(line), headers={"Content-Type": "application/gzip"}
    )


def _reprocess(w: World):
    _upload_grant(w, "sess-audit-3")
    return w.call("POST", "/v1/sessions/sess-audit-3/reprocess")


def _unrelate(w: World):
    relation = w.c.memories.relate(w.admin, w.memory("a"), "relates-to", w.memory("b"))
    return w.call("DELETE", f"/v1/relations/{relation.id}")


def _revoke(w: World):
    key, _ = w.c.keys.create_key(w.admin, "bo", "laptop", frozenset({KeyScope.READ}))
    return w.call("DELETE", f"/v1/admin/keys/{key.id}")


def _import(w: World):
    lines = "\n".join(w.c.portability.export_lines(w.admin))
    return w.call("POST", "/v1/admin/import", content=lines.encode())


def _staged_import(w: World):
    data = ("\n".join(w.c.portability.export_lines(w.admin)) + "\n").encode()
    return w.call("POST", "/v1/admin/imports", json={"bytes": len(data)})


def _start_staged_import(w: World):
    data = ("\n".join(w.c.portability.export_lines(w.admin)) + "\n").encode()
    granted = _staged_import(w).json()
    upload = granted["upload"]
    path = upload["url"].split("://", 1)[1].split("/", 1)[1]
    w.call("PUT", "/" + path, content=data, headers=upload["headers"])
    return w.call("POST", f"/v1/admin/imports/{granted['id']}/start")


MEMORY = {"kind": "fact", "content": "deploys go through the staging stack first", "project": PROJECT}
REST_CALLS: dict[tuple[str, str], Callable[[World], Any]] = {
    ("POST", "/v1/memories"): lambda w: w.call("POST", "/v1/memories", json=MEMORY),
    ("PATCH", "/v1/memories/{memory_id}"): lambda w: w.call(
        "PATCH", f"/v1/memories/{w.memory()}", json={"title": "build tool"}
    ),
    ("DELETE", "/v1/memories/{memory_id}"): lambda w: w.call("DELETE", f"/v1/memories/{w.memory()}"),
    ("POST", "/v1/memories/{memory_id}/supersede"): lambda w: w.call(
        "POST", f"/v1/memories/{w.memory()}/supersede", json={**MEMORY, "content": "the build uses maven"}
    ),
    ("POST", "/v1/relations"): lambda w: w.call(
        "POST",
        "/v1/relations",
        json={"source_id": w.memory("x"), "predicate": "relates-to", "target_id": w.memory("y")},
    ),
    ("DELETE", "/v1/relations/{relation_id}"): _unrelate,
    ("POST", "/v1/admin/keys"): lambda w: w.call("POST", "/v1/admin/keys", json={"member": "bo"}),
    ("DELETE", "/v1/admin/keys/{key_id}"): _revoke,
    ("POST", "/v1/admin/import"): _import,
    ("POST", "/v1/admin/exports"): lambda w: w.call("POST", "/v1/admin/exports"),
    ("POST", "/v1/admin/imports"): _staged_import,
    ("POST", "/v1/admin/imports/{transfer_id}/start"): _start_staged_import,
    ("POST", "/v1/admin/redact"): lambda w: w.call("POST", "/v1/admin/redact", json={"string": "gradle"}),
    ("POST", "/v1/uploads"): _upload_grant,
    ("PUT", "/v1/uploads/{token}"): _put_upload,
    ("POST", "/v1/sessions/{session_id}/reprocess"): _reprocess,
}


@pytest.fixture
def world(container):
    with TestClient(create_app(container)) as client:
        yield World(container, client)


def _mutating_routes(client: TestClient) -> set[tuple[str, str]]:
    paths = client.get("/openapi.json").json()["paths"]
    return {
        (method.upper(), path)
        for path, ops in paths.items()
        for method in ops
        if method in ("post", "put", "patch", "delete")
    }


def test_every_mutating_route_is_known_here(world):
    unknown = _mutating_routes(world.client) - set(REST_CALLS) - READ_ONLY_ROUTES
    assert not unknown, f"give these routes an audit entry and a call in REST_CALLS: {sorted(unknown)}"


@pytest.mark.parametrize("route", sorted(REST_CALLS), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_mutating_route_writes_an_audit_entry(world, route):
    assert route in _mutating_routes(world.client), f"{route} is gone: drop it from REST_CALLS"
    before = {e.id for e in world.trail()}
    response = REST_CALLS[route](world)
    new = [e for e in world.trail() if e.id not in before]
    request_id = response.headers["x-request-id"]
    mine = [e for e in new if e.request_id == request_id]
    assert mine, f"{route} recorded nothing under its request id {request_id}: {new}"
    assert all(e.team_id == world.team_id for e in mine)


def test_a_read_only_route_records_nothing(world):
    world.memory()
    before = len(world.trail())
    world.call("POST", "/v1/search", json={"query": "gradle"})
    assert len(world.trail()) == before


def test_an_export_is_recorded_too(world):
    before = {e.id for e in world.trail()}
    world.call("GET", "/v1/admin/export")
    assert [e.action for e in world.trail() if e.id not in before] == [AuditAction.EXPORT]


# --- MCP --------------------------------------------------------------------------------------------
def _tool_calls(w: World) -> dict[str, Callable[[], dict]]:
    def handoff_get() -> dict:  # with a handoff waiting, so that there is one to hand over
        HandoffService(w.c.memories).save_handoff(w.admin, HandoffNote(project=PROJECT, summary="half done"))
        return {"project": PROJECT}

    return {
        "remember": lambda: {"content": "the api uses fastapi", "project": PROJECT},
        "update": lambda: {"id": w.memory(), "title": "t"},
        "forget": lambda: {"id": w.memory()},
        "supersede": lambda: {"id": w.memory(), "content": "the build uses bazel"},
        "relate": lambda: {"source_id": w.memory("p"), "predicate": "relates-to", "target_id": w.memory("q")},
        "unrelate": lambda: {
            "relation_id": w.c.memories.relate(w.admin, w.memory("r"), "relates-to", w.memory("s")).id
        },
        "record_procedure_outcome": lambda: {
            "id": w.memory("run make test", "procedure"),
            "outcome": "success",
        },
        "handoff_save": lambda: {"project": PROJECT, "summary": "tests pass, docs left"},
        "handoff_get": handoff_get,
        "checkpoint_save": lambda: {"project": PROJECT, "name": "before-refactor", "content": "all green"},
        "feedback": lambda: {"id": w.memory(), "signal": "useful"},
    }


def test_every_mutating_tool_writes_an_audit_entry(container, live_server):
    team, _, secret = container.keys.create_team("tools", "tia")
    admin = container.keys.authenticate(secret)
    w = World.__new__(World)
    w.c, w.admin, w.team_id = container, admin, team.id
    calls = _tool_calls(w)
    silent: list[str] = []

    async def main() -> None:
        async with mcp_session(live_server, secret, "2025-11-25") as session:
            tools = (await session.list_tools()).tools
            mutating = {t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)}
            unknown = mutating - set(calls)
            assert not unknown, f"give these tools an audit entry and a call here: {sorted(unknown)}"
            for name in sorted(mutating):
                before = {e.id for e in w.trail()}
                result = await session.call_tool(name, calls[name]())
                assert not result.is_error, (name, result.content)
                if not [e for e in w.trail() if e.id not in before]:
                    silent.append(name)

    anyio.run(main)
    assert not silent, f"these tools changed memory without an audit entry: {silent}"


def test_what_the_pipeline_learns_is_recorded_as_the_pipeline_for_the_sessions_member(world):
    turns = [
        ("user", "We always run the integration tests with make itest before pushing to main."),
        ("assistant", [{"type": "text", "text": "Understood: make itest runs before every push to main."}]),
    ]
    raw = gzip.compress(claude_transcript("s-pipe", turns))
    learn(world.c, world.client, world.headers, raw=raw, session_id="s-pipe", project=PROJECT, prepared=False)
    learned = [e for e in world.trail() if e.key_id == "pipeline"]
    assert learned and {e.member for e in learned} == {"ana"}
    assert AuditAction.WRITE in {e.action for e in learned}
    assert len({e.request_id for e in learned}) == 1 and learned[0].request_id.startswith("run_")
    assert all(e.agent == "claude-code" for e in learned if e.action is AuditAction.WRITE)


def test_the_session_start_block_handing_over_a_handoff_is_recorded(world):
    note = HandoffNote(project=PROJECT, summary="migrations half done", agent="codex")
    handoff = HandoffService(world.c.memories).save_handoff(world.admin, note)
    block = world.call("GET", "/v1/context", params={"project": PROJECT, "agent": "codex"})
    assert "migrations half done" in block.text
    delivered = [e for e in world.trail() if e.action is AuditAction.DELIVER]
    assert [(e.target, e.request_id) for e in delivered] == [(handoff.id, block.headers["x-request-id"])]


# --- the web UI -------------------------------------------------------------------------------------
# not in the OpenAPI document: its POST routes are walked from the app; signing in and out changes no data
UI_NOT_MUTATING = {("POST", "/ui/login"), ("POST", "/ui/logout")}


def _ui_posts(app) -> set[tuple[str, str]]:
    def walk(routes):
        for route in routes:
            if hasattr(route, "original_router"):
                yield from walk(route.original_router.routes)
            elif getattr(route, "endpoint", None) is not None:
                yield route

    return {
        ("POST", route.path)
        for route in walk(app.routes)
        if route.endpoint.__module__.startswith("cairn.web") and "POST" in route.methods
    }


def _ui_reprocess(w: World) -> str:
    _upload_grant(w, "sess-audit-ui")
    return "/ui/sessions/sess-audit-ui/reprocess"


def _ui_revoke(w: World) -> str:
    key, _ = w.c.keys.create_key(w.admin, "bo", "laptop", frozenset({KeyScope.READ}))
    return f"/ui/keys/{key.id}/revoke"


UI_CALLS: dict[tuple[str, str], Callable[[World], tuple[str, dict[str, str]]]] = {
    ("POST", "/ui/keys"): lambda w: ("/ui/keys", {"member": "bo", "name": "laptop", "scope": "read"}),
    ("POST", "/ui/keys/{key_id}/revoke"): lambda w: (_ui_revoke(w), {}),
    ("POST", "/ui/memories/{memory_id}/edit"): lambda w: (
        f"/ui/memories/{w.memory()}/edit",
        {"content": "the build uses bazel", "title": "", "tags": ""},
    ),
    ("POST", "/ui/memories/{memory_id}/pin"): lambda w: (f"/ui/memories/{w.memory()}/pin", {"pinned": "1"}),
    ("POST", "/ui/memories/{memory_id}/forget"): lambda w: (f"/ui/memories/{w.memory()}/forget", {}),
    ("POST", "/ui/memories/{memory_id}/supersede"): lambda w: (
        f"/ui/memories/{w.memory()}/supersede",
        {"content": "the build uses maven", "title": "", "tags": ""},
    ),
    ("POST", "/ui/memories/{memory_id}/feedback"): lambda w: (
        f"/ui/memories/{w.memory()}/feedback",
        {"signal": "useful", "note": ""},
    ),
    ("POST", "/ui/sessions/{session_id}/reprocess"): lambda w: (_ui_reprocess(w), {"force": "1"}),
}


def _signed_in(w: World) -> tuple[TestClient, str]:
    """A browser-like client signed in to the UI with the admin key, and its CSRF token."""
    client = TestClient(w.client.app, follow_redirects=False)
    form = client.get("/ui/login").text
    login_csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    client.post("/ui/login", data={"csrf": login_csrf, "key": w.secret})
    page = client.get("/ui/")
    assert page.status_code == 200, page.text[:300]
    return client, re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def test_every_mutating_web_ui_route_is_known_here(world):
    unknown = _ui_posts(world.client.app) - set(UI_CALLS) - UI_NOT_MUTATING
    assert not unknown, f"give these UI routes an audit entry and a call in UI_CALLS: {sorted(unknown)}"
    assert set(UI_CALLS) <= _ui_posts(world.client.app), "UI_CALLS names a route that is gone"


@pytest.mark.parametrize("route", sorted(UI_CALLS), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_mutating_web_ui_route_writes_an_audit_entry(world, route):
    client, csrf = _signed_in(world)
    path, form = UI_CALLS[route](world)
    before = {e.id for e in world.trail()}
    response = client.post(path, data={**form, "csrf": csrf})
    assert response.status_code < 400, (path, response.status_code, response.text[:300])
    request_id = response.headers["x-request-id"]
    mine = [e for e in world.trail() if e.id not in before and e.request_id == request_id]
    assert mine, f"{route} recorded nothing under its request id {request_id}"

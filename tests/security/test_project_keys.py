"""A key limited to project A reads and writes nothing of project B, on every REST route of the OpenAPI
document and every MCP tool the official client lists, in local mode and in AWS mode (DynamoDB and S3
on moto, OpenSearch on osmem-server).

A route or tool without a probe in `project_probe` fails here: a new surface must say how it is
addressed, and so passes through the same check. B's data all carries a mark that no answer to the
limited key may hold; after every request, B's data, team-global memories and the keys are as they were.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container, shared_embedder
from cairn.settings import Settings
from fastapi.testclient import TestClient
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.live import free_port, serving
from tests.security.project_probe import (
    A_SESSION,
    B_SESSION,
    MARK,
    PROJECT_A,
    PROJECT_B,
    World,
    leaks,
    mcp_probes,
    rest_probes,
    seed,
    state,
    ui_probes,
)

pytestmark = [pytest.mark.security, pytest.mark.integration, pytest.mark.slow]


@dataclass
class Served:
    mode: str
    container: Any
    world: World
    app: Any
    url: str  # the app on a socket, for the MCP client
    client: TestClient  # the app in process, for REST and the UI: the probe's hundreds of requests

    def request(self, key: str, probe: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}", **probe.get("headers", {})}
        return self.client.request(**{**probe, "headers": headers})


@contextmanager
def _local(tmp_path) -> Iterator[Any]:
    container = build_container(Settings(mode="local", home=tmp_path / "home"))
    try:
        yield container
    finally:
        container.close()


@contextmanager
def _aws() -> Iterator[Any]:
    from tests.contract.adapters_aws import (
        CREDENTIALS,
        REGION,
        drop_table,
        moto_endpoint,
        new_bucket,
        new_table,
        osmem_server,
    )

    env = {
        "AWS_ACCESS_KEY_ID": CREDENTIALS[0],
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS[1],
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT_URL_S3": moto_endpoint(),  # the S3 blob store's own client reaches moto too
    }
    table = new_table()
    with ExitStack() as stack, pytest.MonkeyPatch.context() as mp:
        stack.callback(drop_table, table)
        for name, value in env.items():
            mp.setenv(name, value)
        _, bucket, _ = stack.enter_context(new_bucket())
        clone = stack.enter_context(osmem_server().clone())
        settings = Settings(
            mode="aws",
            table_name=table.name,
            bucket=bucket,
            opensearch_endpoint=clone.url,
            opensearch_auth="none",
            dynamo_endpoint=moto_endpoint(),
            aws_region=REGION,
            ui_secret="probe-" + "x" * 40,  # the stack's Secrets Manager secret, in AWS
        )
        yield build_container(settings, embedder=shared_embedder())


@pytest.fixture(scope="module", params=["local", "aws"])
def served(request, tmp_path_factory) -> Iterator[Served]:
    mode = request.param
    context = _local(tmp_path_factory.mktemp("probe")) if mode == "local" else _aws()
    with context as container:
        world = seed(container)
        app = create_app(container)
        container.settings.port = free_port()
        with serving(app, container.settings.port) as url, TestClient(app) as client:
            yield Served(mode, container, world, app, url, client)


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return sorted(k for k in after.keys() | before.keys() if after.get(k) != before.get(k))


def _sent(probe: dict[str, Any]) -> str:
    return repr(probe)


def test_every_rest_route_of_the_openapi_document_has_a_probe(served):
    document = served.app.openapi()
    routes = {(m.upper(), path) for path, ops in document["paths"].items() for m in ops}
    probes = set(rest_probes(served.world))
    assert routes - probes == set(), (
        "routes without a project probe: add them to tests/security/project_probe.py"
    )
    assert probes - routes == set(), "probes of routes that no longer exist"


def test_a_key_limited_to_one_project_reads_and_writes_nothing_of_another_on_any_rest_route(served):
    world = served.world
    before = state(served.container, world)
    failures = []
    for route, requests in sorted(rest_probes(world).items()):
        for probe in requests:
            r = served.request(world.limited, probe)
            found = leaks(r.text, _sent(probe), world)
            if r.status_code >= 500 or found:
                failures.append(f"{route} {probe}: {r.status_code} leaks {found}: {r.text[:200]}")
        # once per route, not per request: AWS mode's export over moto is what this test spends
        after = state(served.container, world)
        if after != before:
            failures.append(f"{route}: changed {_changed(before, after)}")
            before = after
    assert failures == [], "\n".join(failures)


def test_what_is_named_outside_the_keys_projects_answers_403_and_what_is_named_by_id_404(served):
    world = served.world
    by_project = served.request(
        world.limited, {"method": "GET", "url": "/v1/memories", "params": {"project": PROJECT_B}}
    )
    by_id = served.request(world.limited, {"method": "GET", "url": f"/v1/memories/{world.b['fact']}"})
    absent = served.request(
        world.limited, {"method": "GET", "url": "/v1/memories", "params": {"project": "nowhere"}}
    )
    session = served.request(world.limited, {"method": "GET", "url": f"/v1/sessions/{B_SESSION}"})
    assert (by_project.status_code, by_id.status_code, session.status_code) == (403, 404, 404)
    assert absent.status_code == 403 and absent.json()["error"]["code"] == "outside_projects"
    assert by_project.json()["error"]["message"].startswith("this key is limited to the projects")
    write_team = served.request(
        world.limited,
        {"method": "PATCH", "url": f"/v1/memories/{world.team_memory}", "json": {"pinned": True}},
    )
    assert write_team.status_code == 403  # seen, so not hidden; team-global, so not writable


def test_the_probe_sees_b_through_a_key_for_every_project(served):
    """The control: the same reads with the team's admin key do find B's data, so the probe can tell."""
    world = served.world
    controls = {
        ("GET", "/v1/memories"),
        ("GET", "/v1/memories/{memory_id}"),
        ("POST", "/v1/search"),
        ("GET", "/v1/sessions/{session_id}/transcript"),
        ("GET", "/v1/admin/export"),
        ("GET", "/v1/context"),
    }
    seen = set()
    for route, requests in rest_probes(world).items():
        for probe in requests if route in controls else ():
            if MARK in served.request(world.admin, probe).text.lower():
                seen.add(route)
    assert seen == controls


def test_a_limited_key_works_in_its_own_project_and_sees_team_wide_memories(served):
    world = served.world

    def call(method: str, url: str, **kw: Any) -> httpx.Response:
        return served.request(world.limited, {"method": method, "url": url, **kw})

    written = call(
        "POST",
        "/v1/memories",
        json={"kind": "fact", "content": "alpha builds with make", "project": PROJECT_A},
    )
    assert written.status_code == 201, written.text
    assert call("GET", f"/v1/memories/{world.team_memory}").status_code == 200
    listed = {m["project"] for m in call("GET", "/v1/memories", params={"limit": 500}).json()["items"]}
    assert listed == {PROJECT_A, None}
    sessions = [s["id"] for s in call("GET", "/v1/sessions").json()["items"]]
    assert sessions == [A_SESSION]
    assert call("GET", f"/v1/sessions/{A_SESSION}/transcript", params={"line_start": 1}).status_code == 200
    assert call("GET", "/v1/context", params={"project": PROJECT_A}).status_code == 200
    exported = call("GET", "/v1/admin/export").text
    assert "alpha builds with make" in exported and PROJECT_B not in exported
    whoami = call("GET", "/v1/whoami").json()
    assert whoami["projects"] == [PROJECT_A]


# --- web UI -------------------------------------------------------------------------------------


def _ui_routes(app) -> set[tuple[str, str]]:
    """The web UI's routes (not in the OpenAPI document), walking included routers."""

    def walk(routes):
        for route in routes:
            if hasattr(route, "original_router"):  # an included router (the UI adds its routes unprefixed)
                yield from walk(route.original_router.routes)
            elif getattr(route, "endpoint", None) is not None:
                yield route

    return {
        (m, route.path)
        for route in walk(app.routes)
        if route.endpoint.__module__.startswith("cairn.web")
        for m in route.methods - {"HEAD"}
    }


def _signed_in(served: Served, key: str) -> tuple[TestClient, str]:
    """A browser-like client signed in to the UI with `key`, and its session's CSRF token."""
    client = TestClient(served.app, follow_redirects=True)
    form = client.get("/ui/login").text
    login_csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    client.post("/ui/login", data={"csrf": login_csrf, "key": key})
    page = client.get("/ui/")
    assert page.status_code == 200, page.text[:300]
    return client, re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def test_every_web_ui_route_has_a_probe(served):
    probes = set(ui_probes(served.world))
    routes = _ui_routes(served.app)
    assert routes - probes == set(), (
        "UI routes without a project probe: add them to tests/security/project_probe.py"
    )
    assert probes - routes == set(), "probes of UI routes that no longer exist"


def test_a_key_limited_to_one_project_reads_and_writes_nothing_of_another_in_the_web_ui(served):
    world = served.world
    before = state(served.container, world)
    failures = []
    for route, requests in sorted(ui_probes(world).items()):
        client, csrf = _signed_in(served, world.limited)  # again per route: one of them signs out
        try:
            for probe in requests:
                if probe["method"] == "POST":
                    probe = {**probe, "data": {**probe["data"], "csrf": csrf}}
                r = client.request(**probe)
                found = leaks(r.text, _sent(probe), world)
                if r.status_code >= 500 or found:
                    failures.append(f"{route} {probe}: {r.status_code} leaks {found}: {r.text[:200]}")
        finally:
            client.close()
        after = state(served.container, world)
        if after != before:
            failures.append(f"{route}: changed {_changed(before, after)}")
            before = after
    assert failures == [], "\n".join(failures)


def test_the_ui_probe_sees_b_through_a_key_for_every_project(served):
    client, _ = _signed_in(served, served.world.admin)
    page = client.get(f"/ui/memories/{served.world.b['fact']}")
    client.close()
    assert page.status_code == 200 and MARK in page.text


# --- MCP ----------------------------------------------------------------------------------------


def _mcp(url: str, key: str, body) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def test_every_mcp_tool_the_client_lists_has_a_probe(served):
    async def names(session: ClientSession) -> set[str]:
        return {t.name for t in (await session.list_tools()).tools}

    listed = _mcp(served.url, served.world.limited, names)
    probes = set(mcp_probes(served.world))
    assert listed - probes == set(), (
        "tools without a project probe: add them to tests/security/project_probe.py"
    )
    assert probes - listed == set(), "probes of tools that no longer exist"


def test_a_key_limited_to_one_project_reads_and_writes_nothing_of_another_with_any_mcp_tool(served):
    world = served.world
    container = served.container
    before = state(container, world)

    async def probe_all(session: ClientSession) -> list[str]:
        nonlocal before
        failures = []
        for tool, calls in sorted(mcp_probes(world).items()):
            for arguments in calls:
                try:
                    result = await session.call_tool(tool, arguments)
                    text = repr(result.content) + repr(result.structured_content)
                except MCPError as exc:
                    text = f"{exc} {exc.error}"
                found = leaks(text, repr(arguments), world)
                if found:
                    failures.append(f"{tool} {arguments}: leaks {found}: {text[:200]}")
            after = state(container, world)
            if after != before:
                failures.append(f"{tool}: changed {_changed(before, after)}")
                before = after
        return failures

    failures = _mcp(served.url, world.limited, probe_all)
    assert failures == [], "\n".join(failures)


def test_the_aws_mode_probe_runs_on_dynamodb_and_s3(served):
    if served.mode != "aws":
        pytest.skip("local mode")
    from tests.contract.adapters_aws import aws_client

    settings = served.container.settings
    stored = aws_client("s3").list_objects_v2(Bucket=settings.bucket).get("Contents", [])
    assert any(B_SESSION in o["Key"] for o in stored)
    items = aws_client("dynamodb").scan(TableName=settings.table_name, Select="COUNT")["Count"]
    assert items > 10
    assert os.environ.get("AWS_ENDPOINT_URL_S3")

"""A memory's details are bounded where they come in, and one stored record can never break a team's reads."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
from cairn.domain.details import MAX_DETAILS_DEPTH
from cairn.domain.models import KeyScope, MemoryKind, Principal
from cairn.services.memories import NewMemory

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "details-test", "version": "1"},
}


def nested(levels: int) -> dict[str, Any]:
    """A details object `levels` deep (the object itself counts as one)."""
    value: dict[str, Any] = {"leaf": "bottom"}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def mcp_call(url: str, key: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {key}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    r = httpx.post(url + "/mcp", json=body, headers=headers, timeout=30)
    assert r.status_code < 500, r.text
    return r.json()


def store_bypassing_the_edge(container, team_id: str, details: dict[str, Any]) -> str:
    """A record as an older server stored it, before details were bounded."""
    caller = Principal(team_id=team_id, member="old", key_id="k", scopes=frozenset({KeyScope.WRITE}))
    memory = container.memories._build(
        caller, NewMemory(MemoryKind.FACT, "deploys use blue green", project=PROJECT)
    )
    memory = replace(memory, details=details)
    container.memories._memories.add(memory)
    if container.memories._indexer:
        container.memories._indexer.index([memory])
    return memory.id


def memory_body(**extra: Any) -> dict[str, Any]:
    return {"kind": "fact", "content": "deploys use blue green", "project": PROJECT, **extra}


def test_remembering_details_nested_too_deep_is_refused_with_422_and_nothing_is_stored(api, team_a):
    r = api.post("/v1/memories", json=memory_body(details=nested(300)), headers=team_a.headers)
    assert r.status_code == 422, r.text
    assert "nest" in r.json()["error"]["message"]
    assert api.get("/v1/memories", headers=team_a.headers).json()["items"] == []


def test_details_at_the_depth_limit_are_accepted_and_read_back_unchanged(api, team_a):
    details = nested(MAX_DETAILS_DEPTH)
    r = api.post("/v1/memories", json=memory_body(details=details), headers=team_a.headers)
    assert r.status_code == 201, r.text
    assert api.get(f"/v1/memories/{r.json()['id']}", headers=team_a.headers).json()["details"] == details


def test_patch_and_supersede_refuse_details_nested_too_deep_and_change_nothing(api, team_a):
    made = api.post("/v1/memories", json=memory_body(), headers=team_a.headers).json()
    patched = api.patch(f"/v1/memories/{made['id']}", json={"details": nested(300)}, headers=team_a.headers)
    assert patched.status_code == 422, patched.text
    superseded = api.post(
        f"/v1/memories/{made['id']}/supersede",
        json=memory_body(content="deploys use canaries", details=nested(300)),
        headers=team_a.headers,
    )
    assert superseded.status_code == 422, superseded.text
    items = api.get("/v1/memories", headers=team_a.headers).json()["items"]
    assert [(m["id"], m["details"], m["superseded_by"]) for m in items] == [(made["id"], {}, None)]


def test_the_memory_service_itself_refuses_details_nested_too_deep(container, team_a):
    from cairn.domain.errors import InvalidInput

    caller = Principal(team_id=team_a.team_id, member="m", key_id="k", scopes=frozenset({KeyScope.WRITE}))
    with pytest.raises(InvalidInput, match="nest"):
        container.memories.remember(
            caller, NewMemory(MemoryKind.FACT, "x", project=PROJECT, details=nested(40))
        )


def test_an_import_with_one_record_nested_too_deep_is_refused_and_imports_nothing(api, team_a):
    good = api.post("/v1/memories", json=memory_body(), headers=team_a.headers).json()
    exported = api.get("/v1/admin/export", headers=team_a.headers).text
    record = json.loads(exported.splitlines()[0])["record"]
    api.delete(f"/v1/memories/{good['id']}", headers=team_a.headers)
    deep = {**record, "id": "mem_01jx0000000000000000000001", "details": nested(300)}
    lines = [json.dumps({"type": "memory", "record": record}), json.dumps({"type": "memory", "record": deep})]
    r = api.post("/v1/admin/import", content="\n".join(lines).encode(), headers=team_a.headers)
    assert r.status_code == 400, r.text
    assert "line 2" in r.json()["error"]["message"] and "nest" in r.json()["error"]["message"]
    assert api.get("/v1/memories", headers=team_a.headers).json()["items"] == []


def test_a_stored_record_nested_too_deep_never_breaks_rest_reads_of_the_team(api, container, team_a):
    api.post(
        "/v1/memories", json=memory_body(content="the staging db is postgres 16"), headers=team_a.headers
    )
    deep_id = store_bypassing_the_edge(container, team_a.team_id, nested(300))

    listed = api.get("/v1/memories", headers=team_a.headers)
    assert listed.status_code == 200, listed.text
    assert len(listed.json()["items"]) == 2
    one = api.get(f"/v1/memories/{deep_id}", headers=team_a.headers)
    assert one.status_code == 200, one.text
    searched = api.post("/v1/search", json={"query": "blue green deploys"}, headers=team_a.headers)
    assert searched.status_code == 200, searched.text
    assert deep_id in [h["memory"]["id"] for h in searched.json()["hits"]]

    # what lies past the limit comes out as its JSON text, the rest as it was stored
    node = one.json()["details"]
    for _ in range(MAX_DETAILS_DEPTH - 1):
        node = node["a"]
    assert isinstance(node["a"], str) and json.loads(node["a"]) == nested(300 - MAX_DETAILS_DEPTH)


def test_a_stored_record_nested_too_deep_never_breaks_mcp_get_or_recall(live_server, container, team_a):
    deep_id = store_bypassing_the_edge(container, team_a.team_id, nested(300))
    got = mcp_call(live_server, team_a.admin, "get", {"id": deep_id})
    assert got["result"]["structuredContent"]["memory"]["id"] == deep_id, got
    found = mcp_call(live_server, team_a.admin, "recall", {"query": "blue green deploys", "project": PROJECT})
    assert deep_id in [h["id"] for h in found["result"]["structuredContent"]["hits"]], found


def test_mcp_remember_and_update_refuse_details_nested_too_deep(live_server, container, team_a):
    refused = mcp_call(
        live_server, team_a.admin, "remember", {"content": "x", "project": PROJECT, "details": nested(300)}
    )
    assert "nest" in refused["error"]["message"], refused
    saved = mcp_call(live_server, team_a.admin, "remember", {"content": "y", "project": PROJECT})
    memory_id = saved["result"]["structuredContent"]["memory"]["id"]
    refused = mcp_call(live_server, team_a.admin, "update", {"id": memory_id, "details": nested(300)})
    assert "nest" in refused["error"]["message"], refused
    assert container.memories._memories.get(team_a.team_id, memory_id).details == {}


def test_an_import_line_nested_past_the_json_parsers_limit_is_a_400_not_a_500(api, team_a):
    line = '{"type": "memory", "record": ' + "[" * 5000 + "]" * 5000 + "}"
    r = api.post("/v1/admin/import", content=line.encode(), headers=team_a.headers)
    assert r.status_code == 400, r.text
    assert "line 1" in r.json()["error"]["message"]


def test_an_mcp_call_nested_past_any_parsers_limit_is_refused_without_a_server_error(live_server, team_a):
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": '
        '{"content": "x", "project": "p", "details": ' + deep + '}, "_meta": ' + json.dumps(META) + "}}"
    )
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {team_a.admin}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "remember",
    }
    r = httpx.post(live_server + "/mcp", content=body.encode(), headers=headers, timeout=30)
    assert r.status_code < 500, r.text
    assert "error" in r.json()

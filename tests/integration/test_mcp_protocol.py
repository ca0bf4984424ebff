"""The /mcp wire, request by request with raw HTTP: what a 2025-06-18 client (Codex) and a 2026-07-28
client (Claude Code, with per-request `_meta`) send, and what the HTTP edge refuses before MCP runs.

The official client offers 2025-11-25 in its handshake, so the 2025-06-18 handshake is driven here
by hand; the 2026-07-28 requests are built by hand too, to pin the exact headers and `_meta` keys.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from cairn.api.mcp_errors import UNAUTHENTICATED

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"
ACCEPT = "application/json, text/event-stream"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
}


def post(url: str, body: Any, key: str | None, **headers: str) -> httpx.Response:
    sent = {"Accept": ACCEPT, "Content-Type": "application/json", **headers}
    if key:
        sent["Authorization"] = f"Bearer {key}"
    return httpx.post(url + "/mcp", json=body, headers=sent, timeout=30)


def rpc(method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        **({"params": params} if params is not None else {}),
    }


def modern(
    url: str, key: str, method: str, params: dict[str, Any], name: str | None = None
) -> httpx.Response:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name:
        headers["Mcp-Name"] = name
    return post(url, rpc(method, {**params, "_meta": META}), key, **headers)


def test_a_2025_06_18_client_initializes_statelessly_and_calls_tools(live_server, team_a):
    init = post(
        live_server,
        rpc(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "codex", "version": "0.50.0"},
            },
        ),
        team_a.admin,
    )
    assert init.status_code == 200 and init.headers["content-type"].startswith("application/json")
    result = init.json()["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"]["tools"] is not None and "instructions" in result
    assert "mcp-session-id" not in init.headers

    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (
        post(live_server, initialized, team_a.admin, **{"MCP-Protocol-Version": "2025-06-18"}).status_code
        == 202
    )

    v = {"MCP-Protocol-Version": "2025-06-18"}
    tools = post(live_server, rpc("tools/list", id=2), team_a.admin, **v).json()["result"]["tools"]
    assert "recall" in {t["name"] for t in tools}
    remember = rpc(
        "tools/call", {"name": "remember", "arguments": {"content": "Use pnpm", "project": PROJECT}}, 3
    )
    memory_id = post(live_server, remember, team_a.admin, **v).json()["result"]["structuredContent"][
        "memory"
    ]["id"]
    # a session id from some other server instance means nothing here and is not needed
    recall = rpc("tools/call", {"name": "recall", "arguments": {"query": "pnpm", "project": PROJECT}}, 4)
    answer = post(live_server, recall, team_a.admin, **v, **{"Mcp-Session-Id": "from-another-instance"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["hits"][0]["id"] == memory_id
    assert answer.json()["id"] == 4


def test_a_2026_07_28_client_needs_no_handshake_and_carries_meta_on_every_request(live_server, team_a):
    discovered = modern(live_server, team_a.admin, "server/discover", {})
    assert discovered.status_code == 200, discovered.text
    assert MODERN in discovered.json()["result"]["supportedVersions"]

    listed = modern(live_server, team_a.admin, "tools/list", {})
    assert listed.status_code == 200 and len(listed.json()["result"]["tools"]) == 24

    args = {"content": "CI runs on Buildkite", "project": PROJECT}
    saved = modern(
        live_server, team_a.admin, "tools/call", {"name": "remember", "arguments": args}, "remember"
    )
    assert saved.status_code == 200, saved.text
    assert "mcp-session-id" not in saved.headers
    found = modern(
        live_server, team_a.admin, "tools/call", {"name": "recall", "arguments": {"query": "CI"}}, "recall"
    )
    assert found.json()["result"]["structuredContent"]["hits"][0]["content"] == "CI runs on Buildkite"


def test_a_2026_07_28_request_without_meta_or_with_mismatched_headers_is_refused(live_server, team_a):
    no_meta = post(
        live_server,
        rpc("tools/list", {}),
        team_a.admin,
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
    )
    assert no_meta.status_code == 400 and no_meta.json()["error"]["code"] == -32602
    assert "_meta" in no_meta.json()["error"]["message"]

    mismatch = post(
        live_server,
        rpc("tools/list", {"_meta": META}),
        team_a.admin,
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"},
    )
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020

    future = dict(META, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    unknown = post(
        live_server,
        rpc("tools/list", {"_meta": future}),
        team_a.admin,
        **{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"},
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == -32022
    assert MODERN in unknown.json()["error"]["data"]["supported"]


def test_tool_errors_carry_the_jsonrpc_code_of_their_kind_in_the_2026_era(live_server, team_a):
    missing = modern(
        live_server,
        team_a.admin,
        "tools/call",
        {"name": "get", "arguments": {"id": "mem_01jx0000000000000000000000"}},
        "get",
    )
    assert (
        missing.json()["error"]["code"] == -31404 and missing.json()["error"]["data"]["code"] == "not_found"
    )
    bad = modern(live_server, team_a.admin, "tools/call", {"name": "get", "arguments": {"ID": "x"}}, "get")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32602


def test_requests_without_a_valid_key_are_refused_before_mcp_runs(live_server, team_a):
    init = rpc(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    )
    for key in (None, "cairn_wrong"):
        refused = post(live_server, init, key)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["error"]["code"] == UNAUTHENTICATED
    by_header = post(live_server, init, None, **{"X-API-Key": team_a.admin})
    assert by_header.json()["result"]["serverInfo"]["name"] == "cairn"


def test_foreign_hosts_and_origins_are_refused_with_a_clear_error(live_server, container, team_a):
    init = rpc(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    )
    foreign = post(live_server, init, team_a.admin, Host="attacker.example")
    assert foreign.status_code == 421
    assert "attacker.example" in foreign.json()["error"]["message"]
    assert "CAIRN_ALLOWED_HOSTS" in foreign.json()["error"]["message"]
    origin = post(live_server, init, team_a.admin, Origin="https://attacker.example")
    assert origin.status_code == 403

    container.settings.allowed_hosts = ["*.execute-api.eu-west-1.amazonaws.com"]
    gateway = post(live_server, init, team_a.admin, Host="k7q2x9w4ab.execute-api.eu-west-1.amazonaws.com")
    assert gateway.status_code == 200
    container.settings.allowed_hosts = ["*"]  # behind a gateway that owns the Host header
    assert post(live_server, init, team_a.admin, Host="anything.example").status_code == 200


def test_only_post_is_served_and_malformed_bodies_get_jsonrpc_errors(live_server, team_a):
    auth = {"Authorization": f"Bearer {team_a.admin}"}
    got = httpx.get(live_server + "/mcp", headers={"Accept": "text/event-stream", **auth}, timeout=10)
    assert got.status_code == 405 and got.headers["allow"] == "POST"
    assert httpx.delete(live_server + "/mcp", headers=auth, timeout=10).status_code == 405

    broken = httpx.post(
        live_server + "/mcp",
        content=b"{not json",
        headers={"Accept": ACCEPT, "Content-Type": "application/json", **auth},
        timeout=10,
    )
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    unknown = post(live_server, rpc("tools/explode"), team_a.admin, **{"MCP-Protocol-Version": "2025-06-18"})
    assert unknown.json()["error"]["code"] == -32601

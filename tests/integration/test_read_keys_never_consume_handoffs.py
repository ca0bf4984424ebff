"""A read-only key is shown the waiting handoff in its context but never consumes it; a write key does."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

P = "github.com/acme/shop"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "handoff-test", "version": "1"},
}


def _key(api, team, *scopes: str) -> dict[str, str]:
    made = api.post("/v1/admin/keys", json={"member": "bot", "scopes": list(scopes)}, headers=team.headers)
    assert made.status_code == 201, made.text
    return {"Authorization": f"Bearer {made.json()['secret']}"}


def _handoff(api, team) -> str:
    body = {"kind": "handoff", "content": "resume the billing refactor", "project": P}
    made = api.post("/v1/memories", json=body, headers=team.headers)
    assert made.status_code == 201, made.text
    return made.json()["id"]


def _rest_context(api, headers) -> dict:
    r = api.get("/v1/context", params={"project": P, "agent": "claude-code"}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def _mcp_context(url: str, headers: dict[str, str]) -> dict:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "context", "arguments": {"project": P, "agent": "claude-code"}, "_meta": META},
    }
    sent = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "context",
        **headers,
    }
    r = httpx.post(url + "/mcp", json=body, headers=sent, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["result"]["structuredContent"]


def test_a_read_only_key_gets_the_handoff_over_http_but_does_not_consume_it(api, team_a):
    handoff = _handoff(api, team_a)
    read_only = _key(api, team_a, "read")
    for _ in range(2):
        seen = _rest_context(api, read_only)
        assert seen["handoff_id"] == handoff and "resume the billing refactor" in seen["markdown"]
    # still waiting for a key that may write, which consumes it once
    writer = _key(api, team_a, "read", "write")
    assert _rest_context(api, writer)["handoff_id"] == handoff
    assert _rest_context(api, writer)["handoff_id"] is None


def test_a_read_only_key_gets_the_handoff_over_mcp_but_does_not_consume_it(api, live_server, team_a):
    handoff = _handoff(api, team_a)
    read_only = _key(api, team_a, "read")
    for _ in range(2):
        assert _mcp_context(live_server, read_only)["handoff_id"] == handoff
    writer = _key(api, team_a, "read", "write")
    assert _mcp_context(live_server, writer)["handoff_id"] == handoff
    assert _mcp_context(live_server, writer)["handoff_id"] is None

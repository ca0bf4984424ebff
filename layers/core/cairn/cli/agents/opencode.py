"""OpenCode: the MCP server in `~/.config/opencode/opencode.json` under `mcp` (a "remote" server).

OpenCode runs no command hooks (its extension point is JavaScript plugins), so Cairn reaches it through
MCP only; `install-hooks --agent opencode` says so instead of writing anything.
"""

from __future__ import annotations

from typing import Any

from cairn.cli.agents.base import FileEdit, NotSupported, Wiring, json_edit, remove_server, set_server

NAME = "opencode"
SCHEMA = "https://opencode.ai/config.json"


def _config(w: Wiring):
    return w.home / ".config" / "opencode" / "opencode.json"


def hook_edits(w: Wiring) -> list[FileEdit]:
    raise NotSupported(
        "OpenCode has no command hooks; Cairn reaches it through MCP: cairn install-mcp --client opencode"
    )


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"type": "remote", "url": w.mcp_url, "enabled": True}
    if w.key:
        server["headers"] = w.auth_headers()

    def change(data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("$schema", SCHEMA)
        return set_server(data, "mcp", server)

    return [json_edit(_config(w), change, secret=w.key, skeleton={"$schema": SCHEMA})]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [json_edit(_config(w), lambda d: remove_server(d, "mcp"), skeleton={"$schema": SCHEMA})]

"""OpenCode: a plugin in `~/.config/opencode/plugin/cairn.js`, the MCP server in `opencode.json` under `mcp`.

OpenCode runs no command hooks; its extension point is JavaScript plugins, loaded from the `plugin/` folder
of its config directory. Cairn's plugin (`assets/opencode_plugin.js`, with the interpreter that runs
Cairn's hooks written in) adds the session-start context and the prompt's memories to the system prompt
and hands the session to Cairn's capture hook when it goes idle or is compacted. The MCP server is a
"remote" server with the key as a Bearer header.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from cairn.cli.agents.base import FileEdit, Wiring, json_edit, read_text, remove_server, set_server

NAME = "opencode"
SCHEMA = "https://opencode.ai/config.json"
PLUGIN_MARKER = "cairn install-hooks --agent opencode"  # in the plugin's first line: the file is ours


def _dir(w: Wiring):
    return w.home / ".config" / "opencode"


def _config(w: Wiring):
    return _dir(w) / "opencode.json"


def _plugin(w: Wiring):
    return _dir(w) / "plugin" / "cairn.js"


def plugin_source(python: str) -> str:
    template = resources.files("cairn.cli.agents").joinpath("assets/opencode_plugin.js").read_text("utf-8")
    return template.replace("__CAIRN_PYTHON__", json.dumps(python))


def hook_edits(w: Wiring) -> list[FileEdit]:
    path = _plugin(w)
    return [FileEdit(path, read_text(path), plugin_source(w.python))]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"type": "remote", "url": w.mcp_url, "enabled": True}
    if w.key:
        server["headers"] = w.auth_headers()

    def change(data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault("$schema", SCHEMA)
        return set_server(data, "mcp", server)

    return [json_edit(_config(w), change, secret=w.key, skeleton={"$schema": SCHEMA})]


def remove_edits(w: Wiring) -> list[FileEdit]:
    edits = [json_edit(_config(w), lambda d: remove_server(d, "mcp"), skeleton={"$schema": SCHEMA})]
    path = _plugin(w)
    before = read_text(path)
    if before is not None and PLUGIN_MARKER in before.split("\n", 1)[0]:
        edits.append(FileEdit(path, before, None))
    return edits

"""Cursor: hooks in `~/.cursor/hooks.json` (version 1, flat command lists), MCP in `~/.cursor/mcp.json`.

sessionStart takes `additional_context` in its output; beforeSubmitPrompt cannot add context, so only
sessionStart gets the context hook, and `stop` runs the capture hook when registered.
"""

from __future__ import annotations

from typing import Any

from cairn.cli.agents.base import (
    FileEdit,
    SettingsError,
    Wiring,
    is_ours,
    json_edit,
    remove_server,
    set_server,
)

NAME = "cursor"
SKELETON = {"version": 1}


def _hooks(w: Wiring):
    return w.home / ".cursor" / "hooks.json"


def _mcp(w: Wiring):
    return w.home / ".cursor" / "mcp.json"


def remove_hooks(data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    removed = False
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept = [e for e in entries if not (isinstance(e, dict) and is_ours(e.get("command")))]
        if kept != entries:
            removed = True
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if removed and not hooks:
        del data["hooks"]
    return data


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_hooks(data)
        data.setdefault("version", 1)
        hooks = data.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise SettingsError('"hooks" is not an object; Cairn leaves it alone')
        wanted = [("sessionStart", w.context_command("session-start", NAME))]
        stop = w.capture_command("stop", NAME)
        if stop:
            wanted.append(("stop", stop))
        for event, command in wanted:
            hooks.setdefault(event, []).append({"command": command})
        return data

    return [json_edit(_hooks(w), change, skeleton=SKELETON)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"url": w.mcp_url}
    if w.key:
        server["headers"] = w.auth_headers()
    return [json_edit(_mcp(w), lambda d: set_server(d, "mcpServers", server), secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [
        json_edit(_hooks(w), remove_hooks, skeleton=SKELETON),
        json_edit(_mcp(w), lambda d: remove_server(d, "mcpServers")),
    ]

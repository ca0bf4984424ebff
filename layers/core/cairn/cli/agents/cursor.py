"""Cursor: hooks in `~/.cursor/hooks.json` (version 1, flat command lists), MCP in `~/.cursor/mcp.json`.

CHECKED AGAINST DOCUMENTATION ONLY (cursor.com/docs/agent/hooks and /docs/mcp as quoted by public
integrations; no Cursor build runs here: its `agent` CLI installs from cursor.com, not a registry, and
needs an account). sessionStart takes `additional_context` in its output; beforeSubmitPrompt can only
allow or block (`continue`, `user_message`), so only sessionStart gets the context hook. `stop` (each turn
in the editor) and `sessionEnd` (also fired by `agent -p`, which skips `stop`) run the capture hooks when
registered; the transcript is found by conversation id (transcripts/cursor.py has its documented shape).
"""

from __future__ import annotations

from typing import Any

from cairn.cli.agents.base import (
    FileEdit,
    Wiring,
    add_flat_hook,
    json_edit,
    remove_flat_hooks,
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
    return remove_flat_hooks(data, "command")


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_hooks(data)
        data.setdefault("version", 1)
        wanted = [("sessionStart", w.context_command("session-start", NAME))]
        # stop ends each turn in the editor; the `agent -p` CLI runs sessionEnd but not stop
        for event, name in (("stop", "stop"), ("sessionEnd", "session-end")):
            command = w.capture_command(name, NAME)
            if command:
                wanted.append((event, command))
        for event, command in wanted:
            add_flat_hook(data, event, {"command": command})
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

"""Gemini CLI: hooks and the MCP server both in `~/.gemini/settings.json`.

Hooks use the event -> matcher groups -> hooks shape with a `name` and timeouts in milliseconds;
SessionStart and BeforeAgent take `hookSpecificOutput.additionalContext`. AfterAgent, SessionEnd and
PreCompress run the capture hooks when registered. The MCP server is Streamable HTTP (`httpUrl`) and
`trust`ed: headless `gemini -p` never offers an untrusted server's tools to the model (there is no one to
confirm each call), so without it Cairn's recall and remember would be listed but never usable there.
"""

from __future__ import annotations

from typing import Any

from cairn.cli.agents.base import (
    FileEdit,
    Wiring,
    add_grouped_hook,
    json_edit,
    remove_grouped_hooks,
    remove_server,
    set_server,
)

NAME = "gemini-cli"
CONTEXT_HOOKS = (("SessionStart", "session-start"), ("BeforeAgent", "user-prompt"))
CAPTURE_HOOKS = (("AfterAgent", "stop"), ("SessionEnd", "session-end"), ("PreCompress", "pre-compact"))


def _settings(w: Wiring):
    return w.home / ".gemini" / "settings.json"


def _hook(name: str, command: str, timeout_ms: int) -> dict[str, Any]:
    return {"name": f"cairn-{name}", "type": "command", "command": command, "timeout": timeout_ms}


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_grouped_hooks(data)
        for event, name in CONTEXT_HOOKS:
            add_grouped_hook(data, event, _hook(name, w.context_command(name, NAME), 10_000), None)
        for event, name in CAPTURE_HOOKS:
            command = w.capture_command(name, NAME)
            if command:
                add_grouped_hook(data, event, _hook(name, command, 30_000), None)
        return data

    return [json_edit(_settings(w), change)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"httpUrl": w.mcp_url, "trust": True}
    if w.key:
        server["headers"] = w.auth_headers()
    return [json_edit(_settings(w), lambda d: set_server(d, "mcpServers", server), secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [json_edit(_settings(w), lambda d: remove_server(remove_grouped_hooks(d), "mcpServers"))]

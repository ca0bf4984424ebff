"""Claude Code: hooks in `~/.claude/settings.json`, the MCP server in `~/.claude.json` (user scope).

SessionStart and UserPromptSubmit hooks add context (`hookSpecificOutput.additionalContext`); Stop,
SessionEnd and PreCompact run the capture hooks when the capture module has registered them. Claude Code
hook timeouts are in seconds; the MCP server is a remote "http" server with an Authorization header.
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

NAME = "claude-code"
CONTEXT_HOOKS = (("SessionStart", "session-start"), ("UserPromptSubmit", "user-prompt"))
CAPTURE_HOOKS = (("Stop", "stop"), ("SessionEnd", "session-end"), ("PreCompact", "pre-compact"))


def _settings(w: Wiring):
    return w.home / ".claude" / "settings.json"


def _mcp(w: Wiring):
    return w.home / ".claude.json"


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_grouped_hooks(data)
        for event, name in CONTEXT_HOOKS:
            hook = {"type": "command", "command": w.context_command(name, NAME), "timeout": 10}
            add_grouped_hook(data, event, hook, None)
        for event, name in CAPTURE_HOOKS:
            command = w.capture_command(name, NAME)
            if command:
                add_grouped_hook(data, event, {"type": "command", "command": command, "timeout": 30}, None)
        return data

    return [json_edit(_settings(w), change)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"type": "http", "url": w.mcp_url}
    if w.key:
        server["headers"] = w.auth_headers()
    return [json_edit(_mcp(w), lambda d: set_server(d, "mcpServers", server), secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [
        json_edit(_settings(w), remove_grouped_hooks),
        json_edit(_mcp(w), lambda d: remove_server(d, "mcpServers")),
    ]

"""Codex CLI: hooks in `~/.codex/hooks.json`, MCP as `[mcp_servers.cairn]` in `~/.codex/config.toml`.

Codex's hooks.json has Claude Code's shape (event -> matcher groups -> command hooks, timeouts in
seconds) and its SessionStart/UserPromptSubmit output takes `hookSpecificOutput.additionalContext`,
capped at 2,500 tokens. There is no SessionEnd event; Stop and PreCompact run the capture hooks when
registered. The MCP server is a Streamable HTTP `url` with the key as a literal `http_headers` entry.
"""

from __future__ import annotations

from typing import Any

from cairn.cli.agents.base import (
    SERVER_NAME,
    FileEdit,
    Wiring,
    add_grouped_hook,
    json_edit,
    remove_grouped_hooks,
    toml_edit,
)

NAME = "codex"
CONTEXT_HOOKS = (
    ("SessionStart", "session-start", "startup|resume|clear"),
    ("UserPromptSubmit", "user-prompt", None),
)
CAPTURE_HOOKS = (("Stop", "stop"), ("PreCompact", "pre-compact"))
TABLE = f"mcp_servers.{SERVER_NAME}"


def _hooks(w: Wiring):
    return w.home / ".codex" / "hooks.json"


def _config(w: Wiring):
    return w.home / ".codex" / "config.toml"


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_grouped_hooks(data)
        for event, name, matcher in CONTEXT_HOOKS:
            hook = {"type": "command", "command": w.context_command(name, NAME), "timeout": 10}
            add_grouped_hook(data, event, hook, matcher)
        for event, name in CAPTURE_HOOKS:
            command = w.capture_command(name, NAME)
            if command:
                add_grouped_hook(data, event, {"type": "command", "command": command, "timeout": 30}, None)
        return data

    return [json_edit(_hooks(w), change)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    body: dict[str, Any] = {"url": w.mcp_url}
    if w.key:
        body["http_headers"] = w.auth_headers()
    return [toml_edit(_config(w), TABLE, body, secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [json_edit(_hooks(w), remove_grouped_hooks), toml_edit(_config(w), TABLE, None)]

"""Codex CLI: hooks in `~/.codex/hooks.json`, MCP as `[mcp_servers.cairn]` in `~/.codex/config.toml`.

Codex's hooks.json has Claude Code's shape (event -> matcher groups -> command hooks, timeouts in
seconds) and its SessionStart/UserPromptSubmit output takes `hookSpecificOutput.additionalContext`,
capped at 2,500 tokens. There is no SessionEnd event; Stop and PreCompact run the capture hooks when
registered. The MCP server is a Streamable HTTP `url` with the key as a literal `http_headers` entry.

Codex runs a new hook only once it is trusted; installing records that trust in config.toml the way
Codex's own review does (`codex_trust`), so `codex exec` does not silently skip Cairn's hooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn.cli.agents.base import (
    SERVER_NAME,
    FileEdit,
    Wiring,
    add_grouped_hook,
    json_edit,
    load_json,
    remove_grouped_hooks,
    toml_edit,
)
from cairn.cli.agents.codex_trust import disabled_flag, trust_edit

NAME = "codex"
CONTEXT_HOOKS = (
    ("SessionStart", "session-start", "startup|resume|clear"),
    ("UserPromptSubmit", "user-prompt", None),
)
CAPTURE_HOOKS = (("Stop", "stop"), ("PreCompact", "pre-compact"))
TABLE = f"mcp_servers.{SERVER_NAME}"


def codex_dir(w: Wiring) -> Path:
    """Codex's home as Codex itself names it: trust keys hold the absolute hooks.json path."""
    return (w.home / ".codex").absolute()


def _hooks(w: Wiring) -> Path:
    return codex_dir(w) / "hooks.json"


def _config(w: Wiring) -> Path:
    return codex_dir(w) / "config.toml"


def _trusted(w: Wiring, hooks_edit: FileEdit, base: FileEdit | None = None) -> FileEdit:
    path = _hooks(w)
    old = load_json(path, hooks_edit.before)
    new = load_json(path, hooks_edit.after)
    return trust_edit(_config(w), path, old, new, base)


def hook_notices(w: Wiring) -> list[str]:
    """What the user must still do for the hooks to run (printed loudly after installing)."""
    flag = disabled_flag(_config(w))
    if flag:
        return [
            f"Codex hooks are turned off in {_config(w)} ([features] {flag} = false): Cairn's hooks will"
            f" not run until you set it to true"
        ]
    return []


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

    hooks = json_edit(_hooks(w), change)
    return [hooks, _trusted(w, hooks)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    body: dict[str, Any] = {"url": w.mcp_url}
    if w.key:
        body["http_headers"] = w.auth_headers()
    return [toml_edit(_config(w), TABLE, body, secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    hooks = json_edit(_hooks(w), remove_grouped_hooks)
    return [hooks, _trusted(w, hooks, base=toml_edit(_config(w), TABLE, None))]

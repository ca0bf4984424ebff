"""GitHub Copilot CLI: hooks in `~/.copilot/hooks/cairn.json`, the MCP server in `~/.copilot/mcp-config.json`.

Copilot loads personal hook files from `~/.copilot/hooks/*.json` (besides a repository's `.github/hooks/`,
which needs folder trust) in every mode, `copilot -p` included. A file is `{"version": 1, "hooks": {event:
[{"type": "command", "bash": ..., "timeoutSec": n}]}}` with camelCase events. Hooks read JSON on stdin
(`sessionId`, `cwd`, `prompt`; `agentStop` adds `transcriptPath`, `sessionEnd` a `reason`); `sessionStart`
and `userPromptSubmitted` may print `{"additionalContext": "..."}`, which the CLI puts before the model
(checked with the real 1.0.102). Cairn owns the whole hooks file, so other hook files are never touched.
`agentStop` (each finished turn), `sessionEnd` and `preCompact` run the capture hooks when registered.
The MCP entry is what `copilot mcp add --transport http` itself writes.
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

NAME = "copilot-cli"
SKELETON = {"version": 1}
CONTEXT_HOOKS = (("sessionStart", "session-start"), ("userPromptSubmitted", "user-prompt"))
CAPTURE_HOOKS = (("agentStop", "stop"), ("sessionEnd", "session-end"), ("preCompact", "pre-compact"))


def copilot_home(w: Wiring):
    return w.home / ".copilot"


def hooks_file(w: Wiring):
    return copilot_home(w) / "hooks" / "cairn.json"


def mcp_file(w: Wiring):
    return copilot_home(w) / "mcp-config.json"


def _hook(command: str, timeout_s: int) -> dict[str, Any]:
    return {"type": "command", "bash": command, "timeoutSec": timeout_s}


def remove_hooks(data: dict[str, Any]) -> dict[str, Any]:
    return remove_flat_hooks(data, "bash")


def hook_edits(w: Wiring) -> list[FileEdit]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        remove_hooks(data)
        data.setdefault("version", 1)
        wanted = [(event, w.context_command(name, NAME), 10) for event, name in CONTEXT_HOOKS]
        for event, name in CAPTURE_HOOKS:
            command = w.capture_command(name, NAME)
            if command:
                wanted.append((event, command, 30))
        for event, command, timeout_s in wanted:
            add_flat_hook(data, event, _hook(command, timeout_s))
        return data

    return [json_edit(hooks_file(w), change, skeleton=SKELETON)]


def mcp_edits(w: Wiring) -> list[FileEdit]:
    server: dict[str, Any] = {"tools": ["*"], "type": "http", "url": w.mcp_url}
    if w.key:
        server["headers"] = w.auth_headers()
    return [json_edit(mcp_file(w), lambda d: set_server(d, "mcpServers", server), secret=w.key)]


def remove_edits(w: Wiring) -> list[FileEdit]:
    return [
        json_edit(hooks_file(w), remove_hooks, skeleton=SKELETON),
        json_edit(mcp_file(w), lambda d: remove_server(d, "mcpServers")),
    ]

"""OpenCode 1.18.33 run headless (`opencode run`), wired to a real Cairn by `cairn install-hooks`.

The model is an OpenAI-compatible provider pointed at our fake chat-completions server. OpenCode's own
downloads (models.dev catalogue, default plugins, LSP servers, updates) are switched off, so nothing leaves
127.0.0.1. Cairn reaches OpenCode through the plugin `install-hooks` writes and the MCP entry of
`install-mcp`.
"""

from __future__ import annotations

import json

from tests.agents.behaviours import *  # noqa: F403 - the shared behaviours, run for this agent
from tests.agents.conftest import AgentSpec


def configure(world) -> None:
    config = world.home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake",
        "options": {"baseURL": f"{world.models.url}/v1", "apiKey": "sk-test-fake"},
        "models": {"fake-model": {"name": "Fake model"}},
    }
    settings = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": provider},
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
    }
    (config / "opencode.json").write_text(json.dumps(settings, indent=2) + "\n")
    world.env.update(
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
    )


def run_session(world, prompt: str):
    return world.run(world.binary, "run", prompt, timeout=180)


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


def connected(listing: str) -> bool:
    return any("cairn" in line and "connected" in line.lower() for line in listing.splitlines())


SPEC = AgentSpec("opencode", configure, run_session, list_mcp, connected, recall_tool="cairn_recall")

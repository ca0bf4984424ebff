"""Gemini CLI 0.61.0 run headless (`gemini -p`), wired to a real Cairn by `cairn install-hooks`.

It talks to our fake server through `GOOGLE_GEMINI_BASE_URL` with an API key, in a trusted folder (an
untrusted one makes headless runs exit 55).
"""

from __future__ import annotations

import json

from tests.agents.behaviours import *  # noqa: F403 - the shared behaviours, run for this agent
from tests.agents.conftest import AgentSpec


def configure(world) -> None:
    gemini = world.home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "telemetry": {"enabled": False},
    }
    (gemini / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    (gemini / "trustedFolders.json").write_text(json.dumps({str(world.project): "TRUST_FOLDER"}) + "\n")
    world.env.update(
        GEMINI_API_KEY="fake-gemini-key",
        GOOGLE_GEMINI_BASE_URL=world.models.url,
        GEMINI_CLI_NO_RELAUNCH="true",
    )


def run_session(world, prompt: str):
    return world.run(world.binary, "-m", "gemini-2.5-flash", "-p", prompt, timeout=180)


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


def connected(listing: str) -> bool:
    return any("cairn" in line and "Connected" in line for line in listing.splitlines())


SPEC = AgentSpec("gemini-cli", configure, run_session, list_mcp, connected, recall_tool="mcp_cairn_recall")

"""Claude Code 2.1.197 run headless (`claude -p`), wired to a real Cairn by `cairn install-hooks`."""

from __future__ import annotations

from tests.agents.behaviours import *  # noqa: F403 - the shared behaviours, run for this agent
from tests.agents.conftest import AgentSpec


def configure(world) -> None:
    world.env.update(
        ANTHROPIC_BASE_URL=world.models.url,
        ANTHROPIC_API_KEY="sk-ant-test-fake",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
    )


def run_session(world, prompt: str):
    return world.run(world.binary, "-p", prompt, "--allowedTools", "mcp__cairn__recall", timeout=180)


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


def connected(listing: str) -> bool:
    return any(line.startswith("cairn:") and "Connected" in line for line in listing.splitlines())


SPEC = AgentSpec("claude-code", configure, run_session, list_mcp, connected, recall_tool="mcp__cairn__recall")

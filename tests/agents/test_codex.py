"""Codex CLI 0.169.0 run headless (`codex exec`), wired to a real Cairn by `cairn install-hooks`.

The model provider is ours (`wire_api = "responses"`), the project is trusted and approvals are off, as a
user who runs Codex unattended would set it. The hooks run only if Codex trusts them: the tier runs
`codex exec` with no bypass flag, so what a user gets from `cairn install-hooks` is what is tested.
"""

from __future__ import annotations

from tests.agents.behaviours import *  # noqa: F403 - the shared behaviours, run for this agent
from tests.agents.conftest import AgentSpec


def configure(world) -> None:
    codex = world.home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(
        'model = "gpt-fake"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        "\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{world.models.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "FAKE_OPENAI_API_KEY"\n'
        "\n"
        f'[projects."{world.project}"]\n'
        'trust_level = "trusted"\n'
    )
    world.env["FAKE_OPENAI_API_KEY"] = "sk-test-fake"


def run_session(world, prompt: str):
    return world.run(world.binary, "exec", prompt, timeout=180)


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


def enabled(listing: str) -> bool:
    """`codex mcp list` does not probe servers; it says whether each is enabled (the recall test calls it)."""
    return any(line.split()[:1] == ["cairn"] and "enabled" in line.split() for line in listing.splitlines())


SPEC = AgentSpec("codex", configure, run_session, list_mcp, enabled, recall_tool="mcp__cairn/recall")

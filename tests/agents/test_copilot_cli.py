"""GitHub Copilot CLI 1.0.102 run headless (`copilot -p`), wired to a real Cairn by `cairn install-hooks`.

Copilot needs no GitHub sign-in here: with `COPILOT_OFFLINE=true` and a custom provider (BYOK,
`COPILOT_PROVIDER_BASE_URL`, type `anthropic`) it talks only to our fake Anthropic Messages server, and skips
GitHub authentication, telemetry, the GitHub MCP server and auto-update. As a guard, any other HTTP(S) it
might try goes to a closed port on 127.0.0.1 through the proxy variables. The native binary unpacks its
JavaScript into COPILOT_PKG_CACHE_HOME once; that cache sits next to the npm install, not in the scratch HOME.
Cairn reaches Copilot through `~/.copilot/hooks/cairn.json` and `~/.copilot/mcp-config.json`.
"""

from __future__ import annotations

from tests.agents.behaviours import *  # noqa: F403 - the shared behaviours, run for this agent
from tests.agents.conftest import CACHE, PINNED, AgentSpec, closed_port_url


def configure(world) -> None:
    _, version, _ = PINNED["copilot-cli"]
    nowhere = closed_port_url()
    world.env.update(
        COPILOT_OFFLINE="true",
        COPILOT_AUTO_UPDATE="false",
        COPILOT_PROVIDER_TYPE="anthropic",
        COPILOT_PROVIDER_BASE_URL=world.models.url,
        COPILOT_PROVIDER_API_KEY="sk-ant-test-fake",
        COPILOT_MODEL="claude-sonnet-4.6",
        COPILOT_PKG_CACHE_HOME=str(CACHE / f"copilot-pkg@{version}"),
        HTTP_PROXY=nowhere,
        HTTPS_PROXY=nowhere,
        NO_PROXY="127.0.0.1,localhost",
    )


def run_session(world, prompt: str):
    return world.run(world.binary, "-p", prompt, "--allow-all-tools", "--no-ask-user", timeout=180)


def list_mcp(world):
    return world.run(world.binary, "mcp", "list", timeout=60)


def listed(listing: str) -> bool:
    # `copilot mcp list` shows configured servers ("cairn (http)"), not a live connection; the recall test
    # below proves the connection (the model calls Cairn's tool and gets the learned decision back)
    return any(line.strip().startswith("cairn (http)") for line in listing.splitlines())


SPEC = AgentSpec("copilot-cli", configure, run_session, list_mcp, listed, recall_tool="cairn-recall")

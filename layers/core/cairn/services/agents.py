"""Agent names as hooks and MCP clients send them ("claude", "codex-cli" ...), folded to one spelling."""

from __future__ import annotations

import re

from cairn.domain.errors import InvalidInput

_AGENT_ALIASES = {
    "claude": "claude-code",
    "claude_code": "claude-code",
    "claudecode": "claude-code",
    "codex-cli": "codex",
    "codex_cli": "codex",
    "gemini": "gemini-cli",
    "gemini_cli": "gemini-cli",
    "open-code": "opencode",
    "copilot": "copilot-cli",
    "copilot_cli": "copilot-cli",
    "github-copilot": "copilot-cli",
}
_AGENT_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def normalise_agent(agent: str) -> str:
    """The agent names hooks send ("claude", "codex-cli"...) folded to one spelling; refuses junk."""
    name = (agent or "").strip().lower()
    name = _AGENT_ALIASES.get(name, name)
    if not _AGENT_RE.match(name):
        raise InvalidInput("agent must be a short name such as claude-code, codex or gemini-cli")
    return name


def normalise_agent_or_none(raw: object) -> str | None:
    if not raw:
        return None
    try:
        return normalise_agent(str(raw))
    except InvalidInput:
        return None

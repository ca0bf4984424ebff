"""Per-agent wiring for `cairn install-hooks`, `cairn install-mcp` and `cairn uninstall`.

Each module knows one agent's real settings files and exposes `hook_edits`, `mcp_edits` and
`remove_edits`, all pure functions from a `Wiring` to planned `FileEdit`s.
"""

from cairn.cli.agents import claude_code, codex, copilot, cursor, gemini_cli, opencode

AGENTS = {m.NAME: m for m in (claude_code, codex, gemini_cli, cursor, opencode, copilot)}
# other names people type for an agent
ALIASES = {
    "copilot": copilot.NAME,
    "github-copilot": copilot.NAME,
    "claude": claude_code.NAME,
    "gemini": gemini_cli.NAME,
}

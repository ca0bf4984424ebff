"""`cairn hook ...`: the commands agents run from their hooks, all on one shared Typer group.

The context hooks (`session-start`, `user-prompt`) are registered here; the capture hooks (`stop`,
`session-end`, `pre-compact`) register themselves on the same `hook_app` from their own module. Every
hook command fails open: exit 0, whatever goes wrong. The work of the context hooks lives in
`cairn.cli.hooks_context`, which `cairn install-hooks` runs directly (`python -m ...`) so an agent does
not pay for this CLI's start-up.
"""

from __future__ import annotations

from typing import Annotated

import typer

hook_app = typer.Typer(
    no_args_is_help=True, help="Commands run by agent hooks (they read hook JSON on stdin)."
)

AgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        help="claude-code|codex|gemini-cli|copilot-cli|cursor|opencode|plain (default: from the payload)",
    ),
]
BudgetOpt = Annotated[int | None, typer.Option("--budget", help="Token budget (default: the server's)")]


@hook_app.command("session-start")
def session_start(agent: AgentOpt = None, budget: BudgetOpt = None) -> None:
    """Print Cairn's context for a new session in the agent's format (nothing if the server is down)."""
    from cairn.cli.hooks_context import AGENTS, run_hook

    raise typer.Exit(run_hook("session-start", agent if agent in AGENTS else None, budget))


@hook_app.command("user-prompt")
def user_prompt(agent: AgentOpt = None, budget: BudgetOpt = None) -> None:
    """Print a few memories relevant to the submitted prompt (nothing when none match)."""
    from cairn.cli.hooks_context import AGENTS, run_hook

    raise typer.Exit(run_hook("user-prompt", agent if agent in AGENTS else None, budget))

"""`cairn hook stop|session-end|pre-compact`: the capture hooks on the shared `hook_app` group.

Each records what to upload and starts the detached upload worker (see `cairn.capture.hook`); they
print nothing and exit 0 always. Agents should run `python -m cairn.capture.hook <event> --agent
<agent>` directly, which skips this CLI's start-up; these commands do exactly the same.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cairn.cli.hook_app import hook_app

AgentOpt = Annotated[str | None, typer.Option("--agent", help="claude-code|codex|... (default: detect)")]


def _run(event: str, agent: str | None) -> None:
    from cairn.capture.hook import run_hook

    raise typer.Exit(run_hook(event, agent))


@hook_app.command("stop")
def stop(agent: AgentOpt = None) -> None:
    """Upload what is new in the session's transcript (in the background)."""
    _run("stop", agent)


@hook_app.command("session-end")
def session_end(agent: AgentOpt = None) -> None:
    """Upload the rest of the session's transcript (in the background)."""
    _run("session-end", agent)


@hook_app.command("pre-compact")
def pre_compact(agent: AgentOpt = None) -> None:
    """Upload the transcript before the agent compacts it (in the background)."""
    _run("pre-compact", agent)


@hook_app.command("_upload", hidden=True)
def upload_worker() -> None:
    """Cut queued parts and deliver the spool now (what the detached worker runs)."""
    from cairn.capture.worker import run

    raise typer.Exit(run())

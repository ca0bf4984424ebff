"""Operator commands that work on the store directly (no server): create a team, rebuild the index.

They use the same bootstrap as the server, so with CAIRN_MODE=aws and the stack's table, bucket and
OpenSearch endpoint in the environment they act on a deployed environment; by default on the local store.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from cairn.cli import config

admin_app = typer.Typer(no_args_is_help=True, help="Operate on the store directly (local, or AWS by env).")
out = Console()
err = Console(stderr=True, highlight=False)


def _container():
    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    settings = Settings()
    if settings.mode == "local":
        settings = Settings(home=config.home())
    return build_container(settings)


@admin_app.command("create-team")
def create_team(
    name: Annotated[str, typer.Argument(help="Team name")],
    admin: Annotated[str, typer.Option("--admin", help="The admin member's name")],
) -> None:
    """Create a team and its first admin key (the secret is printed once)."""
    container = _container()
    try:
        team, key, secret = container.keys.create_team(name, admin)
    finally:
        container.close()
    out.print(f"team {team.id} ({team.name}); admin key {key.id} for {admin}: [bold]{secret}[/bold]")


def reindex(
    team: Annotated[list[str] | None, typer.Option("--team", help="Only these team ids")] = None,
) -> None:
    """Rebuild the search index from the source of truth."""
    container = _container()
    counted = ProgressCount("reindexing", "memories")
    try:
        report = container.reindex.rebuild(team or None, progress=counted.add)
    finally:
        container.close()
    out.print(f"reindexed {report.memories} memories of {report.teams} teams")


class ProgressCount:
    """Counts on stderr as work goes (a line each `every` items), readable in a log or a pipe."""

    def __init__(self, doing: str, unit: str, every: int = 1000) -> None:
        self.doing, self.unit, self.every, self.done = doing, unit, every, 0

    def add(self, n: int) -> None:
        before, self.done = self.done, self.done + n
        if before // self.every != self.done // self.every:
            err.print(f"{self.doing}: {self.done} {self.unit}…")

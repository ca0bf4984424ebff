"""Operator commands that work on the store directly (no server): create a team, rebuild the index.

They use the same bootstrap as the server, so with CAIRN_MODE=aws and the stack's table, bucket and
OpenSearch endpoint in the environment they act on a deployed environment; by default on the local store.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.console import Console

from cairn.cli import config
from cairn.cli.output import clock

admin_app = typer.Typer(no_args_is_help=True, help="Operate on the store directly (local, or AWS by env).")
out = Console()
err = Console(stderr=True, highlight=False)


def _container(reconcile: bool = True):
    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    settings = Settings()
    if settings.mode == "local":
        settings = Settings(home=config.home())
    return build_container(settings, reconcile=reconcile)


@admin_app.command("create-team")
def create_team(
    name: Annotated[str, typer.Argument(help="Team name")],
    admin: Annotated[str, typer.Option("--admin", help="The admin member's name")],
) -> None:
    """Create a team and its first admin key (the secret is printed once)."""
    container = _container()
    try:
        _warn_without_quotas(container.settings)
        team, key, secret = container.keys.create_team(name, admin)
    finally:
        container.close()
    out.print(f"team {team.id} ({team.name}); admin key {key.id} for {admin}: [bold]{secret}[/bold]")


@admin_app.command("sync-quotas")
def sync_quotas() -> None:
    """Give every team its own request quota (API Gateway usage-plan key); safe to run again."""
    container = _container()
    try:
        if container.settings.mode != "aws" or not container.settings.usage_plan_id:
            err.print("error: set CAIRN_MODE=aws and CAIRN_USAGE_PLAN_ID (the stack's UsagePlanId output)")
            raise typer.Exit(2)
        teams = container.keys.provision_quotas()
    finally:
        container.close()
    out.print(f"{teams} team(s) have their quota key in usage plan {container.settings.usage_plan_id}")


@admin_app.command("redact")
def redact(
    string: Annotated[str, typer.Option("--string", help="The exact text to remove (a leaked secret, say)")],
    project: Annotated[str | None, typer.Option(help="Only this project's memories and blobs")] = None,
    team: Annotated[
        list[str] | None, typer.Option("--team", help="Only this team (repeatable); default all")
    ] = None,
) -> None:
    """Remove a string from every version of every memory, the search index, sessions and stage outputs."""
    import getpass

    from cairn.domain.models import KeyScope, Principal

    container = _container()
    try:
        if container.history is None:
            err.print("error: this store cannot redact")
            raise typer.Exit(2)
        team_ids = team or [t.id for t in container.teams.list_teams()]
        for team_id in team_ids:
            # the operator acting on the store directly: recorded in the team's audit trail as such
            operator = Principal(
                team_id, f"operator:{getpass.getuser()}", "cli-admin", frozenset({KeyScope.ADMIN})
            )
            report = container.history.redact(operator, string, project)
            out.print(
                f"team {team_id}: {report.memories} memories, {report.sessions} sessions, "
                f"{report.blobs} blobs rewritten; {report.old_versions} old blob versions purged"
            )
    finally:
        container.close()


def _warn_without_quotas(settings) -> None:
    if settings.mode == "aws" and not settings.usage_plan_id:
        err.print(
            "warning: CAIRN_USAGE_PLAN_ID is not set, so the team gets no API Gateway quota key; where the"
            " stack requires one (dev, staging, prod) its requests are refused (403) until"
            " `cairn admin sync-quotas` runs with it set"
        )


def reindex(
    team: Annotated[list[str] | None, typer.Option("--team", help="Only these team ids")] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only report where the index and the memories disagree")
    ] = False,
    repair: Annotated[
        bool, typer.Option("--repair", help="Index only what is missing or stale, drop what is orphaned")
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Which model's vectors are served, built, and stamped")
    ] = False,
    distributed: Annotated[
        bool,
        typer.Option("--distributed", help="AWS: run the model change on the reindex state machine"),
    ] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, max=1000, help="Parallel page workers")] = 8,
) -> None:
    """Rebuild the search index from the source of truth, or check and mend it (--check, --repair).

    After a model change the old vectors keep serving recall while the new ones are built; a run that
    is stopped (even kill -9) resumes where it stopped when started again. On AWS, --distributed runs it
    on the reindex state machine (a Distributed Map of Lambda workers); started again, a failed run
    resumes, and --status shows its pages."""
    if distributed:
        _start_distributed(workers)
        return
    container = _container(reconcile=not (check or repair or status))
    try:
        if status:
            _status(container)
            _distributed_status(container.settings)
            return
        if check or repair:
            _check(container, team or None, repair)
            return
        shown = ReindexProgress("re-embedding" if container.reindex.model_change() else "reindexing")
        try:
            report = container.reindex.rebuild(team or None, progress=shown.add, total=shown.start)
        finally:
            shown.stop()
    finally:
        container.close()
    if report.swapped:
        resumed = f", resuming after {report.resumed_batches} batches" if report.resumed_batches else ""
        out.print(f"re-embedded {report.memories} memories with {report.version}{resumed}; now served")
    else:
        out.print(f"reindexed {report.memories} memories of {report.teams} teams")


def _status(container) -> None:
    state = container.reindex.status()
    counts = state.index
    if state.model:
        out.print(f"configured model: {state.model}")
    if counts is not None:
        out.print(f"served vectors: {counts.served} of {counts.docs} entries, model {counts.active or '-'}")
        if counts.building:
            out.print(
                f"building: {counts.staged} of {counts.docs} entries embedded with {counts.building}"
                f" ({counts.batches} batches committed); `cairn reindex` resumes it"
            )
        elif state.model and counts.active and counts.active != state.model:
            out.print("model changed: `cairn reindex` re-embeds (the old vectors serve until it ends)")
    for version, n in sorted(state.stamps.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
        out.print(f"memories with embedding_version {version or '(none yet)'}: {n}")


def _start_distributed(workers: int) -> None:
    import json

    import boto3

    from cairn.settings import Settings

    settings = Settings()
    if settings.mode != "aws" or not settings.reindex_state_machine_arn:
        err.print("--distributed needs CAIRN_MODE=aws and CAIRN_REINDEX_STATE_MACHINE_ARN (stack output)")
        raise typer.Exit(2)
    sfn = boto3.client("stepfunctions", region_name=settings.aws_region)
    run = sfn.start_execution(
        stateMachineArn=settings.reindex_state_machine_arn, input=json.dumps({"workers": workers})
    )
    out.print(f"started {run['executionArn']}; `cairn reindex --status` shows its pages")


def _distributed_status(settings) -> None:
    """The distributed build's pages, where this deployment has one (AWS)."""
    if settings.mode != "aws" or not settings.bucket:
        return
    from cairn.bootstrap import build_distributed_reindex

    state = build_distributed_reindex(settings).status()
    out.print(f"served index model: {state.served or '-'}")
    if state.state is None:
        return
    out.print(
        f"distributed run ({state.state}): {state.pages_done} of {state.pages} pages"
        f" ({state.fraction:.0%}) of {state.records} memories; building {state.building or '-'}"
    )
    if state.state == "building" and state.pages_done == state.pages:
        out.print("every page is embedded: the run's finish step swaps the index in")


def _check(container, teams: list[str] | None, repair: bool) -> None:
    if not container.reindex.can_check:
        err.print("this deployment's index cannot be checked; run `cairn reindex` to rebuild it")
        raise typer.Exit(2)
    report = container.reindex.repair(teams) if repair else container.reindex.check(teams)
    for team_id, drift in report.teams.items():
        out.print(
            f"team {team_id}: {len(drift.missing)} missing, {len(drift.orphaned)} orphaned,"
            f" {len(drift.stale)} stale"
        )
        for label, ids in (("missing", drift.missing), ("orphaned", drift.orphaned), ("stale", drift.stale)):
            for memory_id in ids[:20]:
                out.print(f"  {label} {memory_id}")
    if report.total and repair:
        out.print(f"repaired {report.total} index entries")
    elif report.total:
        out.print(f"index drift: {report.total} entries; `cairn reindex --repair` mends it")
        raise typer.Exit(1)
    else:
        out.print("index and memories agree")


class ReindexProgress:
    """A progress bar with rate and ETA on a terminal; on a pipe or in a log, a line every `every`
    items with the same figures."""

    def __init__(self, doing: str, unit: str = "memories", every: int = 1000) -> None:
        self.doing, self.unit, self.every = doing, unit, every
        self.done, self.todo, self._began = 0, None, time.monotonic()
        self._bar = None
        self._task = None

    def start(self, done: int, todo: int) -> None:
        self.todo, self._began = todo, time.monotonic()
        if done:
            err.print(f"{self.doing}: resuming, {done} {self.unit} done before")
        if err.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=err,
            )
            self._task = self._bar.add_task(self.doing, total=todo, rate="")
            self._bar.start()

    def add(self, n: int) -> None:
        before, self.done = self.done, self.done + n
        rate = self.done / max(time.monotonic() - self._began, 1e-6)
        if self._bar is not None:
            self._bar.update(self._task, advance=n, rate=f"{rate:.0f}/s")
            return
        if before // self.every != self.done // self.every or (self.todo and self.done >= self.todo):
            left = f", ETA {clock((self.todo - self.done) / rate)}" if self.todo and rate else ""
            of = f"/{self.todo}" if self.todo else ""
            err.print(f"{self.doing}: {self.done}{of} {self.unit}, {rate:.0f}/s{left}")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()

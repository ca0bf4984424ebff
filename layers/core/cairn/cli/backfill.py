"""`cairn backfill`: learn the sessions this project already has, from each installed agent's own store.

It finds the repository's past sessions (Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI; see
`capture/stores.py`), lists them with `--dry-run`, and learns them oldest first through the hooks' path
(`capture/backfill.py`): redacted, the hooks' presigned uploads, one session each with its sub-agents. It
shows how far it got (a bar on a terminal, a line per session on a pipe) and resumes where a killed run
stopped. Sessions of another project are learned only when named by path.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from cairn.capture import backfill as engine
from cairn.capture.backfill import Outcome
from cairn.capture.ledger import Ledger
from cairn.capture.stores import Project, StoredSession, epoch
from cairn.capture.upload import UploadRefused, UploadUnavailable
from cairn.cli.errors import CliError
from cairn.cli.output import Key, Url, clock, err, esc, out

Paths = Annotated[
    list[Path] | None,
    typer.Argument(help="Sessions named by path, of any project: transcripts or Claude Code session folders"),
]


def register(app: typer.Typer) -> None:
    app.command("backfill")(backfill)


def backfill(
    paths: Paths = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be learned; send nothing")
    ] = False,
    since: Annotated[
        str | None, typer.Option(help="Only sessions from this ISO date on, e.g. 2026-01-31")
    ] = None,
    last: Annotated[int | None, typer.Option(help="Only the newest N sessions", min=1)] = None,
    agent: Annotated[list[str] | None, typer.Option("--agent", help="Only this agent's (repeatable)")] = None,
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait for each session to be learned before the next")
    ] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for one session to be learned")] = 600.0,
    as_json: Annotated[bool, typer.Option("--json", help="With --dry-run: the list as JSON")] = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Learn this project's past sessions from every agent's store, oldest first (day-one memory)."""
    began, after = time.monotonic(), _since(since)
    if paths:
        plan = [_named(p, project) for p in paths]
        foreign, stores = 0, ()
    else:
        here = Project.of(Path.cwd())
        found = engine.scan(here)
        plan = [(s, project or here.key) for s in found.sessions]
        foreign, stores = found.foreign, found.stores
    scanned_s = time.monotonic() - began
    filed = {s.key: p for s, p in plan}
    wanted = [s for s, _ in plan if not agent or s.agent in agent]
    plan = [(s, filed[s.key]) for s in engine.select(wanted, after, last)]
    if dry_run:
        _list(plan, foreign, stores, scanned_s, as_json)
        return
    if not plan:
        out.print("[dim]no sessions of this project to learn[/dim]" + _left_out(foreign))
        return
    from cairn.cli.client import CairnClient

    client = CairnClient(url, key)
    ledger = Ledger.for_server(client.url)
    shown = Shown(plan)
    try:
        outcomes = engine.learn(
            plan, engine.Api(client.url, client.api_key), ledger, shown, wait_s=timeout if wait else 0
        )
    except UploadUnavailable as exc:
        raise CliError(
            f"the server could not be reached ({exc}); {shown.done} of {len(plan)} sessions are done, "
            "and `cairn backfill` again goes on from there"
        ) from None
    except UploadRefused as exc:
        raise CliError(f"the server refused the backfill: {exc}") from None
    finally:
        shown.stop()
    _summary(outcomes, time.monotonic() - began)


# --- sessions named by path --------------------------------------------------------------------------
def _named(path: Path, project: str | None) -> tuple[StoredSession, str]:
    """A session the user named: any project's, filed under its own (or --project)."""
    from cairn.capture.parts import UnreadableTranscript, read_whole
    from cairn.capture.subagents import subagent_files
    from cairn.cli.pipeline_cmds import check_transcript, ingest_folder, project_for

    if path.is_dir():
        path = ingest_folder(path)
    if not path.is_file():
        raise CliError(f"no such file: {path}")
    try:
        raw = read_whole(path)
    except UnreadableTranscript as exc:
        raise CliError(str(exc)) from None
    parsed = check_transcript(raw, path, None)
    others = tuple(subagent_files(path))
    started = epoch(parsed.started_at, path.stat().st_mtime)
    size = sum(p.stat().st_size for p in (path, *others))
    session_id = parsed.session_id or path.name.split(".")[0]
    s = StoredSession(parsed.agent, session_id, path, started, size, parsed.cwd or "", others)
    return s, project_for(project, parsed, path).project


def _since(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not an ISO date, e.g. 2026-01-31", param_hint="--since"
        ) from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


# --- what is shown -----------------------------------------------------------------------------------
def _day(s: StoredSession) -> str:
    return datetime.fromtimestamp(s.started, UTC).strftime("%Y-%m-%d %H:%M") if s.started else "undated"


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _with(s: StoredSession) -> str:
    extra = len(s.others) + len(s.children)
    return f"  +{extra} file(s) of the same session" if extra else ""


def _list(plan, foreign: int, stores, scanned_s: float, as_json: bool) -> None:
    if as_json:
        rows = [
            {
                "agent": s.agent,
                "session_id": s.session_id,
                "started": datetime.fromtimestamp(s.started, UTC).isoformat() if s.started else None,
                "bytes": s.size,
                "parts": s.parts,
                "project": p,
                "path": str(s.path),
            }
            for s, p in plan
        ]
        typer.echo(
            json.dumps({"sessions": rows, "foreign": foreign, "scan_s": round(scanned_s, 3)}, indent=2)
        )
        return
    for s, p in plan:
        out.print(
            f"{_day(s)}  {s.agent:<12} {_size(s.size):>8}  {s.session_id}{_with(s)}  [dim]{esc(p)}[/dim]"
        )
    total = sum(s.size for s, _ in plan)
    where = f" in {', '.join(stores)}" if stores else ""
    out.print(
        f"{len(plan)} session(s), {_size(total)}, would be learned oldest first{_left_out(foreign)}; "
        f"looked{where} in {scanned_s:.2f} s"
    )


def _left_out(foreign: int) -> str:
    return f"; {foreign} session(s) of other projects left out" if foreign else ""


def _learned_line(o: Outcome) -> str:
    s = o.session
    what = f"{_day(s)} {s.agent} {s.session_id}"
    if o.how == "learned":
        made = o.stats.get("consolidate") or {}
        if o.status == "failed":
            error = o.stats.get("error") or {}
            why = esc(error.get("message", "?"))
            return f"[red]failed[/red] {what}: {why} (`cairn reprocess {s.session_id}` runs it again)"
        return (
            f"[green]learned[/green] {what}: +{made.get('created', 0)} new, ~{made.get('merged', 0)} merged"
        )
    if o.how == "sent":
        return f"[green]sent[/green] {what}" + (f" (still {o.status})" if o.status else "")
    if o.how == "known" or (o.how == "done" and o.detail in ("sent", "known")):
        return f"[dim]already learned[/dim] {what}"
    if o.how == "done":
        return f"[dim]left out before[/dim] {what}: {esc(o.detail)}"
    return f"[yellow]{o.how}[/yellow] {what}: {esc(o.detail)}"


class Shown:
    """Progress by bytes (learning time follows a transcript's size): a bar with count and ETA on a
    terminal; on a pipe, one line per session with the same figures."""

    def __init__(self, plan) -> None:
        self.todo = len(plan)
        self.total = sum(max(s.size, 1) for s, _ in plan)
        self.done, self.bytes_done, self._began = 0, 0, time.monotonic()
        self._bar = self._task = None
        if err.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[count]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=err,
            )
            self._task = self._bar.add_task("backfill", total=self.total, count=f"0/{self.todo}")
            self._bar.start()

    def sending(self, s: StoredSession, part: int, total: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=f"{s.agent} {s.session_id[:12]} part {part}/{total}")

    def waiting(self, seconds: float, why: str) -> None:
        err.print(f"[yellow]waiting {seconds:.0f} s[/yellow]: {esc(why)}")

    def finished(self, outcome: Outcome) -> None:
        self.done += 1
        self.bytes_done += max(outcome.session.size, 1)
        line = _learned_line(outcome)
        if self._bar is not None:
            self._bar.console.print(line)
            self._bar.update(self._task, completed=self.bytes_done, count=f"{self.done}/{self.todo}")
            return
        elapsed = time.monotonic() - self._began
        left = (self.total - self.bytes_done) * elapsed / max(self.bytes_done, 1)
        out.print(f"{line}  [dim]({self.done}/{self.todo}, ETA {clock(left)})[/dim]")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _summary(outcomes: list[Outcome], took: float) -> None:
    counts: dict[str, int] = {}
    for o in outcomes:
        how = "failed" if o.status == "failed" else o.how
        counts[how] = counts.get(how, 0) + 1
    before = counts.pop("known", 0) + counts.pop("done", 0)
    parts = [f"{n} {how}" for how, n in counts.items()]
    if before:
        parts.append(f"{before} already learned")
    out.print(f"backfill: {', '.join(parts) or 'nothing to do'} in {took:.1f} s")

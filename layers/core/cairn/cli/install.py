"""`cairn install-hooks`, `cairn install-mcp`, `cairn uninstall`: wire Cairn into agents' own settings files.

The per-agent modules (`cairn.cli.agents`) plan the edits; this module shows them (`--dry-run` prints a
unified diff, with the API key masked) or applies them: a timestamped backup of each file first, then
an atomic replace that keeps the file's permissions (new files holding a key are private to the user).
Re-running changes nothing; `uninstall` removes only Cairn's entries.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from cairn.atomic import write_atomic
from cairn.cli.agents import AGENTS, ALIASES
from cairn.cli.agents.base import FileEdit, NotSupported, SettingsError, Wiring

CAPTURE_EVENTS = ("stop", "session-end", "pre-compact")
err = Console(stderr=True, highlight=False)

Home = Annotated[
    Path | None, typer.Option("--home", help="Home directory holding the agents' settings (default: yours)")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the changes as a diff; write nothing")]
_NAMES = "|".join(AGENTS)


def register(app: typer.Typer) -> None:
    app.command("install-hooks")(install_hooks)
    app.command("install-mcp")(install_mcp)
    app.command("uninstall")(uninstall)


def install_hooks(
    agent: Annotated[str, typer.Option("--agent", help=_NAMES)],
    home: Home = None,
    dry_run: DryRun = False,
) -> None:
    """Add Cairn's hooks (context at session start, capture at stop) to an agent's settings."""
    module = _agent(agent)
    wiring = Wiring(home=_home(home), python=sys.executable, capture=capture_commands())
    _run(lambda: module.hook_edits(wiring), dry_run)
    for notice in getattr(module, "hook_notices", lambda _w: [])(wiring):
        err.print(f"[bold yellow]warning:[/] {escape(notice)}", soft_wrap=True)


def install_mcp(
    client: Annotated[str, typer.Option("--client", help=_NAMES)],
    url: Annotated[str | None, typer.Option("--url", help="Cairn server URL (default: user config)")] = None,
    key: Annotated[str | None, typer.Option("--key", help="API key (default: user config)")] = None,
    home: Home = None,
    dry_run: DryRun = False,
) -> None:
    """Register Cairn's MCP server (<url>/mcp, key as a Bearer header) with an agent."""
    from cairn.cli import config

    module = _agent(client)
    cfg = config.load()
    wiring = Wiring(
        home=_home(home),
        python=sys.executable,
        url=url or cfg.url or "http://127.0.0.1:8787",
        key=key or cfg.api_key,
    )
    if not wiring.key:
        err.print(
            "[yellow]no API key (pass --key or run `cairn serve` once); the server will refuse the client[/]"
        )
    _run(lambda: module.mcp_edits(wiring), dry_run)


def uninstall(
    agent: Annotated[
        list[str] | None, typer.Option("--agent", help=f"{_NAMES} (repeatable; default: all)")
    ] = None,
    home: Home = None,
    dry_run: DryRun = False,
) -> None:
    """Remove Cairn's hooks and MCP server entries, and nothing else."""
    modules = [_agent(a) for a in agent] if agent else list(AGENTS.values())
    wiring = Wiring(home=_home(home), python=sys.executable)
    _run(lambda: [e for m in modules for e in m.remove_edits(wiring)], dry_run)


# --- applying -------------------------------------------------------------------------------------
def capture_commands() -> dict[str, bool]:
    """The capture hooks registered on `cairn hook` (name -> whether it takes --agent)."""
    from cairn.cli.hook_app import hook_app

    found: dict[str, bool] = {}
    for command in hook_app.registered_commands:
        if command.callback is None:
            continue
        name = command.name or command.callback.__name__.replace("_", "-")
        if name in CAPTURE_EVENTS:
            found[name] = "agent" in inspect.signature(command.callback).parameters
    return found


def apply(edits: list[FileEdit], dry_run: bool = False, stamp: str | None = None) -> list[str]:
    """Write (or, dry, describe) the edits; returns one human line per file."""
    stamp = stamp or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report: list[str] = []
    for edit in edits:
        if not edit.changed:
            if edit.before is not None:
                report.append(f"unchanged {edit.path}")
            continue
        if dry_run:
            report.append(diff(edit))
            continue
        backup = _backup(edit, stamp)
        if edit.after is None:
            edit.path.unlink()
            report.append(f"removed {edit.path}" + (f" (backup {backup})" if backup else ""))
        else:
            _write(edit)
            verb = "updated" if edit.before is not None else "created"
            report.append(f"{verb} {edit.path}" + (f" (backup {backup})" if backup else ""))
    return report


def diff(edit: FileEdit) -> str:
    def masked(text: str | None) -> list[str]:
        text = text or ""
        if edit.secret:
            text = text.replace(edit.secret, edit.secret[:8] + "…")
        return text.splitlines(keepends=True)

    lines = difflib.unified_diff(
        masked(edit.before),
        masked(edit.after),
        fromfile=str(edit.path) if edit.before is not None else "/dev/null",
        tofile=str(edit.path) if edit.after is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")


def _backup(edit: FileEdit, stamp: str) -> Path | None:
    if edit.before is None:
        return None
    target = edit.path.with_name(f"{edit.path.name}.cairn-backup-{stamp}")
    n = 1
    while target.exists():  # two edits of one file within a second keep both originals
        target = edit.path.with_name(f"{edit.path.name}.cairn-backup-{stamp}-{n}")
        n += 1
    mode = edit.path.stat().st_mode & 0o777
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(edit.before)
    return target


def _write(edit: FileEdit) -> None:
    assert edit.after is not None
    edit.path.parent.mkdir(parents=True, exist_ok=True)
    new_mode = 0o600 if edit.secret else 0o644
    mode = edit.path.stat().st_mode & 0o777 if edit.path.exists() else new_mode
    if edit.secret and edit.secret in edit.after:
        mode &= 0o700  # a file that now holds an API key is readable by its owner only
    write_atomic(edit.path, edit.after, mode=mode)


def _run(plan: Callable[[], list[FileEdit]], dry_run: bool) -> None:
    """Plan every edit before writing any, so a file Cairn refuses to touch leaves all files as they were."""
    try:
        lines = apply(plan(), dry_run)
    except NotSupported as exc:
        err.print(f"[yellow]{exc}[/yellow]")
        return
    except (OSError, SettingsError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    for line in lines or ["nothing to change"]:
        typer.echo(line)


def _agent(name: str):
    name = name.strip().lower()
    module = AGENTS.get(ALIASES.get(name, name))
    if module is None:
        err.print(f"[red]error:[/red] unknown agent {name!r}; one of {', '.join(AGENTS)}")
        raise typer.Exit(2)
    return module


def _home(home: Path | None) -> Path:
    return (home or Path.home()).expanduser()

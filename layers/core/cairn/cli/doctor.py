"""`cairn doctor`: is everything Cairn needs in place? One line per check, with the fix for each failure.

Checks the server (reachable) and the key (accepted), then for every agent (Claude Code, Codex, Gemini
CLI, OpenCode, Cursor) whether Cairn's hooks and MCP entry are installed, runnable (the interpreter a
hook names exists), trusted (Codex) and pointing at a server that answers with a key it accepts.
`--json` prints the same as one object. Exits 1 when any check failed; "not installed" is a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from cairn.cli.agents import AGENTS
from cairn.cli.doctor_checks import FAIL, OK, Check, Probe, agent_checks, probe, server_checks
from cairn.cli.output import AsJson, Key, Url, print_json

_MARK = {OK: "[green]ok  [/]", "warn": "[yellow]warn[/]", FAIL: "[red]FAIL[/]"}


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def run_checks(url: str, key: str | None, home: Path) -> list[Check]:
    probes: dict[tuple[str, str | None], Probe] = {}
    result = probes.setdefault((url.rstrip("/"), key), probe(url, key))
    checks = server_checks(url, key, result)
    for name in AGENTS:
        checks += agent_checks(name, home, probes)
    return checks


def doctor(
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="Home directory holding the agents' settings (default: yours)"),
    ] = None,
) -> None:
    """Check the server, the key, and every agent's hooks and MCP entry; print the fix for each failure."""
    from cairn.cli import config
    from cairn.cli.client import check_url

    cfg = config.load()
    url = check_url(url or cfg.url or "http://127.0.0.1:8787", "--url" if url else "the configured url")
    checks = run_checks(url, key or cfg.api_key, (home or Path.home()).expanduser())
    failed = any(c.status == FAIL for c in checks)
    if as_json:
        print_json({"ok": not failed, "checks": [_as_dict(c) for c in checks]})
    else:
        out = Console(highlight=False, soft_wrap=True)
        for c in checks:
            where = f"{c.agent} " if c.agent else ""
            fix = f"  [dim]→ fix: {escape(c.fix)}[/]" if c.fix and c.status != OK else ""
            out.print(f"{_MARK[c.status]} {escape(where + c.name)}: {escape(c.detail)}{fix}")
    if failed:
        raise typer.Exit(1)


def _as_dict(c: Check) -> dict[str, str | None]:
    return {"agent": c.agent, "name": c.name, "status": c.status, "detail": c.detail, "fix": c.fix}

"""`cairn`: run the embedded server, and remember, recall, forget, manage keys, export and import.

Every command but `serve` talks to a server over HTTP (the local one by default, or a team's), with the
URL and key from flags, environment (CAIRN_URL, CAIRN_API_KEY) or the user config written by `serve`.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cairn.cli import config, hooks_capture, install, pipeline_cmds  # noqa: F401 (hooks_capture registers hooks)
from cairn.cli.admin import admin_app, reindex
from cairn.cli.client import ApiError, CairnClient
from cairn.cli.hook_app import hook_app
from cairn.domain.errors import CairnError
from cairn.projects import project_key

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
apikey = typer.Typer(no_args_is_help=True, help="Create, list and revoke API keys (admin).")
app.add_typer(apikey, name="apikey")
app.add_typer(admin_app, name="admin")
app.add_typer(hook_app, name="hook")
install.register(app)
pipeline_cmds.register(app)
app.command("reindex")(reindex)
out = Console()
err = Console(stderr=True)

Url = Annotated[str | None, typer.Option("--url", help="Server URL (default: user config)")]
Key = Annotated[str | None, typer.Option("--key", help="API key (default: user config)")]


def _client(url: str | None, key: str | None) -> CairnClient:
    return CairnClient(url, key)


def _fail(exc: Exception) -> None:
    err.print(f"[red]error:[/red] {exc}")
    raise typer.Exit(1)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port")] = 8787,
) -> None:
    """Run the embedded Cairn server (SQLite storage in the user data dir)."""
    import uvicorn

    from cairn.api.app import create_app
    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    settings = Settings(mode="local", home=config.home(), host=host, port=port)
    container = build_container(settings)
    url = settings.base_url
    _ensure_local_admin(container, url)
    err.print(f"Cairn {settings.mode} server on [bold]{url}[/bold] · data in {settings.home}")
    resumed = container.runner.resume_unfinished(container.teams)
    if resumed:
        err.print(f"Resuming learning from {resumed} session(s) the last run left unfinished")
    uvicorn.run(create_app(container), host=host, port=port, log_level="warning")


def _ensure_local_admin(container, url: str) -> None:
    """First run: a local team and an admin key, saved in the user config for the CLI and hooks."""
    cfg = config.load()
    if cfg.api_key:
        try:
            container.keys.authenticate(cfg.api_key)
        except CairnError:
            err.print("The saved API key is not valid for this store; making a new one.")
        else:
            if cfg.url != url:
                config.save(url, cfg.api_key)
            return
    _, _, secret = container.keys.create_team("local", getpass.getuser() or "me")
    path = config.save(url, secret)
    err.print(f"Created a local team and an admin key (saved in {path})")


@app.command()
def remember(
    content: Annotated[str, typer.Argument(help="What to remember")],
    kind: Annotated[str, typer.Option(help="preference|fact|pattern|procedure|decision|episode")] = "fact",
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    scope: Annotated[str, typer.Option(help="project|team|personal")] = "project",
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Tag (repeatable)")] = None,
    title: Annotated[str | None, typer.Option(help="Short title")] = None,
    pinned: Annotated[bool, typer.Option(help="Always include in context")] = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Store a memory."""
    body = {
        "kind": kind,
        "content": content,
        "scope": scope,
        "project": project or project_key(os.getcwd()),
        "tags": tag or [],
        "title": title,
        "pinned": pinned,
    }
    try:
        m = _client(url, key).request("POST", "/v1/memories", json=body)
    except (ApiError, OSError) as exc:
        _fail(exc)
    out.print(f"[green]remembered[/green] {m['id']} ({m['kind']}, {m['project'] or 'team'})")


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for")],
    limit: Annotated[int, typer.Option(help="How many")] = 10,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds")] = None,
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects", help="Search the whole team")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Hybrid search (BM25 + embeddings) over the team's memories."""
    body = {
        "query": query,
        "limit": limit,
        "kinds": kind or None,
        "project": None if all_projects else (project or project_key(os.getcwd())),
    }
    try:
        res = _client(url, key).request("POST", "/v1/search", json=body)
    except (ApiError, OSError) as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps(res))
        return
    if res.get("degraded"):
        err.print(f"[yellow]degraded:[/yellow] {res['degraded']}")
    table = Table("id", "kind", "memory", "score", show_lines=False)
    for h in res["hits"]:
        m = h["memory"]
        table.add_row(m["id"], m["kind"], m["content"][:200], f"{h['score']:.3f}")
    out.print(table if res["hits"] else "[dim]nothing found[/dim]")


@app.command()
def forget(memory_id: str, url: Url = None, key: Key = None) -> None:
    """Delete a memory."""
    try:
        _client(url, key).request("DELETE", f"/v1/memories/{memory_id}")
    except (ApiError, OSError) as exc:
        _fail(exc)
    out.print(f"[green]forgot[/green] {memory_id}")


@app.command()
def status(url: Url = None, key: Key = None) -> None:
    """Show the server, the team and the key in use."""
    client = _client(url, key)
    try:
        health = client.request("GET", "/v1/health")
        me = client.request("GET", "/v1/whoami")
    except (ApiError, OSError) as exc:
        _fail(exc)
    out.print(f"server  {client.url} ({health['mode']}, v{health['version']})")
    out.print(f"team    {me['team_id']}  member {me['member']}  scopes {','.join(me['scopes'])}")
    out.print(f"project {project_key(os.getcwd())}")


@apikey.command("create")
def apikey_create(
    member: Annotated[str, typer.Option(help="Whose key")],
    name: Annotated[str, typer.Option(help="A label")] = "default",
    scope: Annotated[list[str] | None, typer.Option("--scope", help="read|write|admin (repeatable)")] = None,
    expires_days: Annotated[int | None, typer.Option(help="Expire after N days")] = None,
    url: Url = None,
    key: Key = None,
) -> None:
    """Create a key; its secret is printed once."""
    scopes = scope or ["read", "write"]
    body = {"member": member, "name": name, "scopes": scopes, "expires_in_days": expires_days}
    try:
        res = _client(url, key).request("POST", "/v1/admin/keys", json=body)
    except (ApiError, OSError) as exc:
        _fail(exc)
    out.print(f"key {res['key']['id']} for {member}: [bold]{res['secret']}[/bold] (shown once)")


@apikey.command("list")
def apikey_list(url: Url = None, key: Key = None) -> None:
    """List the team's keys."""
    try:
        res = _client(url, key).request("GET", "/v1/admin/keys")
    except (ApiError, OSError) as exc:
        _fail(exc)
    table = Table("id", "member", "name", "prefix", "scopes", "expires", "revoked")
    for k in res["items"]:
        table.add_row(
            k["id"],
            k["member"],
            k["name"],
            k["prefix"] + "…",
            ",".join(k["scopes"]),
            k["expires_at"] or "-",
            k["revoked_at"] or "-",
        )
    out.print(table)


@apikey.command("revoke")
def apikey_revoke(key_id: str, url: Url = None, key: Key = None) -> None:
    """Revoke a key at once."""
    try:
        _client(url, key).request("DELETE", f"/v1/admin/keys/{key_id}")
    except (ApiError, OSError) as exc:
        _fail(exc)
    out.print(f"[green]revoked[/green] {key_id}")


@app.command("export")
def export_cmd(
    path: Annotated[Path | None, typer.Argument(help="File to write (default: stdout)")] = None,
    url: Url = None,
    key: Key = None,
) -> None:
    """Export the team's memories, relations and sessions as JSON lines."""
    client = _client(url, key)
    sink = path.open("w", encoding="utf-8") if path else sys.stdout
    n = 0
    try:
        for line in client.stream_lines("/v1/admin/export"):
            if line:
                sink.write(line + "\n")
                n += 1
    except (ApiError, OSError) as exc:
        _fail(exc)
    finally:
        if path:
            sink.close()
    err.print(f"exported {n} records")


IMPORT_BATCH_BYTES = 512 * 1024


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="A file written by `cairn export`", exists=True)],
    url: Url = None,
    key: Key = None,
) -> None:
    """Import JSON lines into the team (ids kept; records already present are skipped)."""
    client = _client(url, key)
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    totals = {"memories": 0, "relations": 0, "sessions": 0, "skipped": 0}
    columns = (TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("import", total=len(lines))
        for batch in _batches(lines, IMPORT_BATCH_BYTES):
            try:
                res = client.request("POST", "/v1/admin/import", content="\n".join(batch).encode())
            except (ApiError, OSError) as exc:
                _fail(exc)
            for k in totals:
                totals[k] += res[k]
            progress.advance(task, len(batch))
    out.print(", ".join(f"{v} {k}" for k, v in totals.items()))


def _batches(lines: list[str], max_bytes: int):
    batch: list[str] = []
    size = 0
    for line in lines:
        if batch and size + len(line) + 1 > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line.encode()) + 1
    if batch:
        yield batch


if __name__ == "__main__":  # pragma: no cover
    app()

"""`cairn`: run the embedded server; remember, recall, digest, list, show, forget; keys, export, import.

Every command but `serve`, `stop` and `admin` talks to a server over HTTP (the local one by default, or a
team's), with the URL and key from flags, environment (CAIRN_URL, CAIRN_API_KEY) or the user config
written by `serve`. Read commands take `--json` to print the API's JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import httpx
import typer

from cairn.atomic import atomic_file
from cairn.cli import backfill, browse, doctor, hooks_capture, install, pipeline_cmds, serve_cmds  # noqa: F401 (registers)
from cairn.cli.admin import admin_app, reindex
from cairn.cli.client import CairnClient
from cairn.cli.errors import CairnGroup, CliError
from cairn.cli.hook_app import hook_app
from cairn.cli.output import AsJson, Full, Key, Url, cut, err, esc, out, print_digest, print_json
from cairn.domain.models import MemoryKind, Scope
from cairn.projects import project_key

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, cls=CairnGroup)
apikey = typer.Typer(no_args_is_help=True, help="Create, list and revoke API keys (admin).")
app.add_typer(apikey, name="apikey")
app.add_typer(admin_app, name="admin")
app.add_typer(hook_app, name="hook")
install.register(app)
pipeline_cmds.register(app)
serve_cmds.register(app)
browse.register(app)
backfill.register(app)
doctor.register(app)
app.command("reindex")(reindex)

KINDS = ", ".join(k.value for k in MemoryKind)
SCOPES = ", ".join(s.value for s in Scope)


def _client(url: str | None, key: str | None) -> CairnClient:
    return CairnClient(url, key)


def _one_of(allowed: type[MemoryKind] | type[Scope], what: str):
    values = [v.value for v in allowed]

    def check(value: str | None) -> str | None:
        if value is not None and value not in values:
            raise typer.BadParameter(f"{value!r} is not a {what}; one of: {', '.join(values)}")
        return value

    return check


@app.command()
def remember(
    content: Annotated[str, typer.Argument(help="What to remember")],
    kind: Annotated[
        str, typer.Option(help=f"One of: {KINDS}", callback=_one_of(MemoryKind, "kind"))
    ] = "fact",
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    scope: Annotated[
        str, typer.Option(help=f"One of: {SCOPES}", callback=_one_of(Scope, "scope"))
    ] = "project",
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Tag (repeatable)")] = None,
    title: Annotated[str | None, typer.Option(help="Short title")] = None,
    pinned: Annotated[bool, typer.Option(help="Always include in context")] = False,
    as_json: AsJson = False,
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
    m = _client(url, key).request("POST", "/v1/memories", json=body)
    if as_json:
        print_json(m)
        return
    out.print(f"[green]remembered[/green] {m['id']} ({m['kind']}, {esc(m['project'] or 'team')})")


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for")],
    limit: Annotated[int, typer.Option(help="How many")] = 10,
    kind: Annotated[list[str] | None, typer.Option("--kind", help=f"Only these kinds ({KINDS})")] = None,
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects", help="Search the whole team")] = False,
    full: Full = False,
    as_json: AsJson = False,
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
    res = _client(url, key).request("POST", "/v1/search", json=body)
    if as_json:
        print_json(res)
        return
    if res.get("degraded"):
        err.print(f"[yellow]degraded:[/yellow] {esc(res['degraded'])}")
    if not res["hits"] and not res.get("tool_text"):
        out.print("[dim]nothing found[/dim]")
    for h in res["hits"]:
        m = h["memory"]
        out.print(f"{m['id']}  {m['kind']:<10} {h['score']:.3f}  {esc(cut(m['content'], full))}")
        if h.get("untrusted"):
            out.print(f"    [yellow]untrusted:[/yellow] {esc(h['untrusted'])}")
    for t in res.get("tool_text") or ():  # what tools said past their excerpts: data, not advice
        out.print(f"{t['memory']['id']}  [yellow]{t['untrusted']}[/yellow]  {esc(t['lines'])}")


@app.command()
def digest(
    project: Annotated[str | None, typer.Option(help="Project key (default: from the current dir)")] = None,
    sessions: Annotated[
        int | None, typer.Option(help="The last N sessions (default 5)", min=1, max=50)
    ] = None,
    since: Annotated[str | None, typer.Option(help="Sessions from this ISO date on, e.g. 2026-11-01")] = None,
    budget: Annotated[int, typer.Option(help="Token budget of the text")] = 2_000,
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Catch up: what the project's last sessions asked, learned, changed and closed, and what is open."""
    if sessions is not None and since is not None:
        raise typer.BadParameter("give either --sessions or --since, not both")
    params: dict[str, str | int] = {"budget": budget}
    if sessions is not None:
        params["sessions"] = sessions
    if since is not None:
        params["since"] = since
    project = project or project_key(os.getcwd())
    path = f"/v1/projects/{quote(project, safe='/')}/digest"
    res = _client(url, key).request("GET", path, params=params)
    if as_json:
        print_json(res)
        return
    print_digest(res)


@app.command()
def forget(memory_id: str, url: Url = None, key: Key = None) -> None:
    """Delete a memory."""
    _client(url, key).request("DELETE", f"/v1/memories/{memory_id}")
    out.print(f"[green]forgot[/green] {memory_id}")


@app.command()
def status(as_json: AsJson = False, url: Url = None, key: Key = None) -> None:
    """Show the server, the team and the key in use, and this directory's project."""
    client = _client(url, key)
    health = client.request("GET", "/v1/health")
    me = client.request("GET", "/v1/whoami")
    project = project_key(os.getcwd())
    if as_json:
        print_json({"url": client.url, "health": health, "whoami": me, "project": project})
        return
    out.print(f"server  {client.url} ({health['mode']}, v{health['version']})")
    out.print(f"team    {me['team_id']}  member {esc(me['member'])}  key {me['key_id']}")
    out.print(f"scopes  {','.join(me['scopes'])}")
    if me.get("projects") is not None:
        out.print(f"limited to {esc(', '.join(me['projects']))}")
    out.print(f"project {esc(project)}")


@apikey.command("create")
def apikey_create(
    member: Annotated[str, typer.Option(help="Whose key")],
    name: Annotated[str, typer.Option(help="A label")] = "default",
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="read, write or admin (repeatable)")
    ] = None,
    expires_days: Annotated[int | None, typer.Option(help="Expire after N days")] = None,
    project: Annotated[
        list[str] | None,
        typer.Option("--project", help="Limit the key to this project (repeatable; default: every project)"),
    ] = None,
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Create a key; its secret is printed once. With --project it reads and writes only those projects."""
    scopes = scope or ["read", "write"]
    body = {
        "member": member,
        "name": name,
        "scopes": scopes,
        "expires_in_days": expires_days,
        "projects": project or None,
    }
    res = _client(url, key).request("POST", "/v1/admin/keys", json=body)
    if as_json:
        print_json(res)
        return
    out.print(f"key {res['key']['id']} for {esc(member)}: [bold]{res['secret']}[/bold] (shown once)")


@apikey.command("list")
def apikey_list(as_json: AsJson = False, url: Url = None, key: Key = None) -> None:
    """List the team's keys."""
    res = _client(url, key).request("GET", "/v1/admin/keys")
    if as_json:
        print_json(res)
        return
    for k in res["items"]:
        state = f"revoked {k['revoked_at'][:19]}" if k["revoked_at"] else "active"
        expires = f"expires {k['expires_at'][:19]}" if k["expires_at"] else "no expiry"
        projects = "all projects" if k.get("projects") is None else ",".join(k["projects"])
        out.print(
            f"{k['id']}  {esc(k['member'])}  {esc(k['name'])}  {k['prefix']}…  "
            f"{','.join(k['scopes'])}  {esc(projects)}  {expires}  {state}"
        )
    if not res["items"]:
        out.print("[dim]no keys[/dim]")


@apikey.command("revoke")
def apikey_revoke(key_id: str, url: Url = None, key: Key = None) -> None:
    """Revoke a key at once."""
    _client(url, key).request("DELETE", f"/v1/admin/keys/{key_id}")
    out.print(f"[green]revoked[/green] {key_id}")


POLL_S = 1.0  # how often the CLI asks how far a staged export or import got


@app.command("export")
def export_cmd(
    path: Annotated[Path | None, typer.Argument(help="File to write (default: stdout)")] = None,
    url: Url = None,
    key: Key = None,
) -> None:
    """Export the team's memories (with their vectors), relations and sessions as JSON lines.

    The server writes the export to storage (S3 in AWS) while this shows how far it got, then the file
    is downloaded from a short-lived link. A file is written in full to a temporary file next to it,
    then renamed over it: an export that fails leaves an existing file as it was.
    """
    if path is not None:
        _check_export_path(path)
    client = _client(url, key)
    link, records = _staged_export(client)
    if path is None:
        n = _download(link, sys.stdout)
    else:
        with atomic_file(path, mode=0o600, durable=True) as sink:
            n = _download(link, sink)
    if n != records:
        raise CliError(f"the export holds {records} records but {n} arrived; run `cairn export` again")
    err.print(f"exported {n} records" + (f" to {esc(path)}" if path else ""))


def _check_export_path(path: Path) -> None:
    if path.is_dir():
        raise CliError(f"{path} is a folder; give a file name to export to")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise CliError(f"cannot write {path}: the folder {folder} does not exist")


def _staged_export(client: CairnClient) -> tuple[str, int]:
    """Start the export, show its progress until done; (the file's short-lived URL, its records)."""
    status = client.request("POST", "/v1/admin/exports")
    status = _wait(client, f"/v1/admin/exports/{status['id']}", "exporting", status)
    return status["url"], int(status["records"])


def _wait(client: CairnClient, path: str, verb: str, status: dict) -> dict:
    shown = None
    while status["state"] not in ("done", "failed"):
        time.sleep(POLL_S)
        status = client.request("GET", path)
        total = f"/{status['total']}" if status.get("total") else ""
        line = f"{verb}: {status['state']}, {status['records']}{total} records"
        if line != shown:
            err.print(line + "…")
            shown = line
    if status["state"] == "failed":
        raise CliError(f"{verb[:-3]} failed: {status.get('error') or 'no reason given'}")
    return status


def _download(link: str, sink) -> int:
    """Stream the file from its presigned link (no API key sent: the link is its own permission)."""
    n = 0
    try:
        with httpx.stream("GET", link, timeout=60.0) as resp:
            if resp.status_code >= 400:
                raise CliError(f"the export could not be downloaded: HTTP {resp.status_code}")
            for line in resp.iter_lines():
                if line:
                    sink.write(line + "\n")
                    n += 1
    except httpx.HTTPError as exc:
        raise CliError(f"the export could not be downloaded: {exc}") from exc
    return n


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="A file written by `cairn export`")],
    url: Url = None,
    key: Key = None,
) -> None:
    """Import JSON lines into the team (ids kept; records already present are skipped).

    The file is uploaded to storage (S3 in AWS) by a short-lived link, then the server imports it
    while this shows how far it got; vectors of the server's model are used as they are."""
    lines = read_export(path)
    data = ("\n".join(lines) + "\n").encode()
    client = _client(url, key)
    granted = client.request("POST", "/v1/admin/imports", json={"bytes": len(data)})
    _upload(granted["upload"], data)
    err.print(f"uploaded {len(lines)} lines")
    status = client.request("POST", f"/v1/admin/imports/{granted['id']}/start")
    status = _wait(client, f"/v1/admin/imports/{granted['id']}", "importing", status)
    out.print(", ".join(f"{v} {k}" for k, v in status["counts"].items()))


def _upload(target: dict, data: bytes) -> None:
    try:
        if target["method"] == "PUT":
            sent = httpx.put(target["url"], content=data, headers=target.get("headers") or {}, timeout=300)
        else:  # S3 presigned POST: the policy fields first, the file last
            sent = httpx.post(
                target["url"],
                data=target.get("fields") or {},
                files={"file": ("import.jsonl", data, "application/x-ndjson")},
                timeout=300,
            )
    except httpx.HTTPError as exc:
        raise CliError(f"the import file could not be uploaded: {exc}") from exc
    if sent.status_code >= 400:
        raise CliError(f"the import file could not be uploaded: HTTP {sent.status_code} {sent.text[:200]}")


def read_export(path: Path) -> list[str]:
    """The non-empty lines of an export file, each checked to be a JSON object before anything is sent."""
    if path.is_dir():
        raise CliError(f"{path} is a folder; give a file written by `cairn export`")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{path} is not a `cairn export` file: it is not UTF-8 text") from None
    lines = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            raise CliError(f"{path} is not a `cairn export` file: line {n} is not a JSON object")
        lines.append(line)
    return lines


if __name__ == "__main__":  # pragma: no cover
    app()

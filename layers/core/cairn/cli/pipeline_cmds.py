"""`cairn ingest`, `cairn reprocess`, `cairn sessions`: feed transcripts to the learning pipeline, watch it.

`ingest` goes through the same path as the capture hooks (redact, gzip, presigned upload), so what it
teaches Cairn is exactly what the hooks would have.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from cairn.cli import config
from cairn.cli.client import ApiError, CairnClient

out = Console()
err = Console(stderr=True)
Wait = Annotated[bool, typer.Option("--wait", help="Wait for the pipeline and show what was learned")]
Url = Annotated[str | None, typer.Option("--url", help="Server URL (default: user config)")]
Key = Annotated[str | None, typer.Option("--key", help="API key (default: user config)")]
DONE = ("learned", "failed")


def _fail(message: object) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def read_transcript(path: Path) -> bytes:
    """Plain JSONL, whatever it was stored as (.gz, .zst or plain)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    return raw


def describe(raw: bytes, filename: str) -> tuple[str | None, str | None, str | None]:
    """(agent, session id, cwd) as the transcript states them in its first lines."""
    from cairn.transcripts import detect_agent

    objects: list[dict[str, Any]] = []
    for line in raw.splitlines()[:50]:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            objects.append(obj)
    agent = detect_agent(iter(objects), filename)
    session = cwd = None
    for obj in objects:
        payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
        if obj.get("type") == "session_meta":
            session, cwd = session or payload.get("id"), cwd or payload.get("cwd")
        session = session or obj.get("sessionId")
        cwd = cwd or obj.get("cwd")
    return agent, session, cwd


def _project_for(cwd: str | None) -> str:
    from cairn.projects import project_key

    if cwd and Path(cwd).is_dir():
        return project_key(cwd)
    return project_key(os.getcwd())


def wait_for(client: CairnClient, session_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        session = client.request("GET", f"/v1/sessions/{session_id}")
        if session["status"] in DONE or time.monotonic() > deadline:
            return session
        time.sleep(0.5)


def _print_outcome(client: CairnClient, session: dict) -> None:
    if session["status"] == "failed":
        error = session["stats"].get("error") or {}
        _fail(f"learning failed in {error.get('stage', '?')}: {error.get('message', 'unknown error')}")
    if session["status"] not in DONE:
        err.print(f"[yellow]still {session['status']}[/yellow]; check later with `cairn sessions`")
        return
    params = {"session_id": session["id"], "project": session["project"], "limit": 200}
    res = client.request("GET", "/v1/memories", params=params)
    table = Table("kind", "memory", "confidence")
    for m in res["items"]:
        table.add_row(m["kind"], m["content"][:160], f"{m['confidence']:.2f}")
    out.print(table if res["items"] else "[dim]nothing new learned[/dim]")


def ingest(
    path: Annotated[Path, typer.Argument(help="Transcript (.jsonl, .jsonl.gz, .jsonl.zst)", exists=True)],
    agent: Annotated[str | None, typer.Option(help="claude-code|codex (default: detect)")] = None,
    project: Annotated[str | None, typer.Option(help="Project key (default: the transcript's cwd)")] = None,
    session: Annotated[str | None, typer.Option(help="Session id (default: from the transcript)")] = None,
    wait: Wait = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 600.0,
    url: Url = None,
    key: Key = None,
) -> None:
    """Upload a transcript to learn from, through the same path as the capture hooks."""
    from cairn.capture.upload import UploadRefused, UploadUnavailable, prepare, upload_part

    raw = read_transcript(path)
    found_agent, found_session, cwd = describe(raw, path.name)
    agent = agent or found_agent or "claude-code"
    session_id = session or found_session or path.name.split(".")[0]
    project = project or _project_for(cwd)
    prepared = prepare(raw)
    client = CairnClient(url, key)
    cfg = config.load()
    try:
        upload_part(
            client.url,
            key or cfg.api_key,
            agent=agent,
            session_id=session_id,
            project=project,
            part=1,
            data=prepared.data,
        )
    except (UploadRefused, UploadUnavailable) as exc:
        _fail(exc)
    redacted = sum(prepared.redactions.values())
    out.print(
        f"[green]uploaded[/green] session {session_id} ({agent}, project {project})"
        + (f", {redacted} secrets redacted" if redacted else "")
    )
    if wait:
        try:
            _print_outcome(client, wait_for(client, session_id, timeout))
        except (ApiError, OSError) as exc:
            _fail(exc)


def reprocess(
    session_id: Annotated[str, typer.Argument(help="Session id")],
    force: Annotated[bool, typer.Option(help="Redo every stage, not just the unfinished ones")] = False,
    wait: Wait = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 600.0,
    url: Url = None,
    key: Key = None,
) -> None:
    """Run the learning pipeline on a session again (e.g. after it failed)."""
    client = CairnClient(url, key)
    try:
        client.request("POST", f"/v1/sessions/{session_id}/reprocess", json={"force": force})
        out.print(f"[green]queued[/green] {session_id}")
        if wait:
            time.sleep(0.2)
            _print_outcome(client, wait_for(client, session_id, timeout))
    except (ApiError, OSError) as exc:
        _fail(exc)


def sessions(
    project: Annotated[str | None, typer.Option(help="Only this project")] = None,
    limit: Annotated[int, typer.Option(help="How many")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Sessions and their learning-pipeline status."""
    params: dict[str, Any] = {"limit": limit}
    if project:
        params["project"] = project
    try:
        res = CairnClient(url, key).request("GET", "/v1/sessions", params=params)
    except (ApiError, OSError) as exc:
        _fail(exc)
    if as_json:
        out.print_json(json.dumps(res))
        return
    table = Table("session", "project", "agent", "status", "parts", "learned", "note", "updated")
    for s in res["items"]:
        stats = s.get("stats") or {}
        made = stats.get("consolidate") or {}
        error = stats.get("error") or {}
        note = f"{error.get('stage')}: {error.get('message')}" if error else ""
        table.add_row(
            s["id"],
            s["project"] or "-",
            s["agent"],
            s["status"],
            str(len(s["transcript_keys"])),
            f"+{made.get('created', 0)} ~{made.get('merged', 0)}" if made else "-",
            note[:80],
            (s["updated_at"] or "")[:19],
        )
    out.print(table if res["items"] else "[dim]no sessions yet[/dim]")


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("reprocess")(reprocess)
    app.command("sessions")(sessions)

"""`cairn ingest`, `cairn reprocess`, `cairn sessions`: feed transcripts to the learning pipeline, watch it.

`ingest` checks the file is an agent transcript with something to learn from before anything is sent,
then goes through the same path as the capture hooks (redact, gzip, presigned upload), so what it
teaches Cairn is exactly what the hooks would have. A session's other files (sub-agents, Codex worker
threads, continued parts) given after it are learned with it, as one session, as further parts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any

import typer

from cairn.cli.client import CairnClient
from cairn.cli.errors import CliError
from cairn.cli.output import AsJson, Full, Key, Url, cut, err, esc, out, print_json
from cairn.domain.errors import InvalidInput, PayloadTooLarge
from cairn.domain.vocabulary import DONE_STATUSES, SessionStatus

Wait = Annotated[
    bool, typer.Option("--wait", help="Wait for the pipeline, show its stages and what was learned")
]
STAGES = ("parse", "chunk", "extract", "consolidate", "reflect")
POLL_S = 0.5


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("reprocess")(reprocess)
    app.command("sessions")(sessions)


# --- reading and checking a transcript ---------------------------------------------------------
def read_transcript(path: Path) -> bytes:
    """Plain JSONL, whatever it was stored as (.gz, .zst or plain)."""
    from cairn.capture.parts import UnreadableTranscript, read_whole

    try:
        return read_whole(path)
    except UnreadableTranscript as exc:
        raise CliError(str(exc)) from None


def check_transcript(raw: bytes, path: Path, agent: str | None):
    """The parsed transcript, or a clear refusal when it is not one with at least one event."""
    from cairn.transcripts import normalise_agent, parse_transcript
    from cairn.transcripts.detect import KNOWN_FORMATS, PARSED_AGENTS

    if agent is not None and normalise_agent(agent) is None:
        raise CliError(
            f"--agent {agent!r} is not a transcript format Cairn reads; use one of {', '.join(PARSED_AGENTS)}"
        )
    try:
        parsed = parse_transcript(raw, agent, path.name)
    except (InvalidInput, PayloadTooLarge) as exc:
        raise CliError(f"{path}: {exc.message}; nothing was uploaded") from None
    if parsed.agent not in PARSED_AGENTS:
        raise CliError(f"{path} is empty, not a {KNOWN_FORMATS} transcript; nothing was uploaded")
    if not parsed.events:
        raise CliError(
            f"{path} has no conversation to learn from (a {parsed.agent} transcript with no events)"
        )
    return parsed


@dataclass(frozen=True)
class Filing:
    project: str
    why: str  # empty when the user said so


def project_for(given: str | None, parsed, path: Path) -> Filing:
    """The project a transcript is filed under: --project; the folder it was recorded in when it exists
    here; else its git remote, else that folder's name; never silently the shell's current project."""
    from cairn.projects import normalise_remote, project_key

    if given:
        return Filing(given, "")
    cwd = parsed.cwd
    if cwd and Path(cwd).is_dir():
        return Filing(project_key(cwd), f"from the folder it was recorded in, {cwd}")
    if parsed.git_remote:
        return Filing(
            normalise_remote(parsed.git_remote), f"from its git remote ({cwd or '?'} is not on this machine)"
        )
    if cwd:
        name = (PureWindowsPath(cwd) if "\\" in cwd else PurePosixPath(cwd)).name
        if name:
            return Filing(name, f"from the name of its folder ({cwd} is not on this machine)")
    raise CliError(f"{path} does not say which folder it was recorded in; pass --project")


def ingest_folder(path: Path) -> Path:
    """A session folder given to `ingest` (Claude Code's `<session>/` holding `subagents/`) stands for
    its session: the transcript beside it, which brings its sub-agents along."""
    from cairn.capture.subagents import session_transcript

    main = session_transcript(path)
    if main is None:
        raise CliError(
            f"{path} is a folder, not a session's folder (no {path.name}.jsonl beside it); "
            "give a transcript file (.jsonl, .jsonl.gz or .jsonl.zst)"
        )
    return main


def other_files(path: Path, more: list[Path], agent: str) -> tuple[list[bytes], int]:
    """The session's other files, each checked to be a transcript of the same agent: those given, then
    its sub-agents' (Claude Code's `<session>/subagents/`) not already among them; and how many of
    those were found beside it."""
    from cairn.capture.subagents import subagent_files

    given = [p.resolve() for p in more]
    found = [p for p in subagent_files(path) if p.resolve() not in given]
    data = []
    for other in [*more, *found]:
        if not other.is_file():
            raise CliError(f"no such file: {other}; nothing was uploaded")
        raw = read_transcript(other)
        check_transcript(raw, other, agent)
        data.append(raw)
    return data, len(found)


# --- waiting on the pipeline -------------------------------------------------------------------
def _stage_line(stage: str, stats: dict) -> str:
    s = stats.get(stage) or {}
    if stage == "parse":
        return f"parse: {s.get('events', 0)} events from {s.get('parts', 0)} part(s)"
    if stage == "chunk":
        return f"chunk: {s.get('chunks', 0)} chunks"
    if stage == "extract":
        return f"extract: {s.get('candidates', 0)} candidates ({', '.join(s.get('extractors') or []) or '-'})"
    if stage == "consolidate":
        return (
            f"consolidate: +{s.get('created', 0)} new, ~{s.get('merged', 0)} merged, "
            f"{s.get('superseded', 0)} superseded, {s.get('relations', 0)} relations"
        )
    return f"reflect: {'reflection written' if s.get('reflection_id') else 'no reflection'}"


def wait_for(client: CairnClient, session_id: str, timeout: float) -> dict:
    """Poll the session until it is learned or failed, printing each status and stage as it appears."""
    deadline = time.monotonic() + timeout
    status, shown = None, set()
    while True:
        session = client.request("GET", f"/v1/sessions/{session_id}")
        if session["status"] != status:
            status = session["status"]
            shown = set() if status == SessionStatus.PROCESSING else shown
            err.print(f"  {status}")
        stats = session.get("stats") or {}
        for stage in STAGES:
            if stage in stats and stage not in shown:
                shown.add(stage)
                err.print(f"  {esc(_stage_line(stage, stats))}")
        if status in DONE_STATUSES or time.monotonic() > deadline:
            return session
        time.sleep(POLL_S)


def _print_outcome(client: CairnClient, session: dict, full: bool = False) -> None:
    if session["status"] == SessionStatus.FAILED:
        error = session["stats"].get("error") or {}
        raise CliError(
            f"learning failed in {error.get('stage', '?')}: {error.get('message', 'unknown error')}"
        )
    if session["status"] not in DONE_STATUSES:
        err.print(f"[yellow]still {session['status']}[/yellow]; check later with `cairn sessions`")
        return
    params = {"session_id": session["id"], "project": session["project"], "limit": 200}
    res = client.request("GET", "/v1/memories", params=params)
    for m in res["items"]:
        out.print(f"{m['id']}  {m['kind']:<10} {m['confidence']:.2f}  {esc(cut(m['content'], full))}")
    if not res["items"]:
        out.print("[dim]nothing new learned[/dim]")


# --- the commands ------------------------------------------------------------------------------
def ingest(
    path: Annotated[
        Path,
        typer.Argument(help="Transcript (.jsonl, .jsonl.gz, .jsonl.zst) or a Claude Code session folder"),
    ],
    more: Annotated[
        list[Path] | None,
        typer.Argument(help="The session's other files (sub-agents, worker threads, continued parts)"),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(help="claude-code, codex, gemini-cli, opencode or copilot-cli (default: detect)"),
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="Project key (default: from the transcript's folder or git remote)")
    ] = None,
    session: Annotated[str | None, typer.Option(help="Session id (default: from the transcript)")] = None,
    wait: Wait = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 600.0,
    full: Full = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Upload a transcript to learn from, through the same path as the capture hooks, with the session's
    other files after it as one session. The manifests of the repository it ran in (package.json,
    Makefile, CI...) go with it when that folder is here."""
    from cairn.capture.parts import session_parts
    from cairn.capture.stores import epoch
    from cairn.capture.upload import upload_part

    if path.is_dir():
        path = ingest_folder(path)
    if not path.exists():
        raise CliError(f"no such file: {path}")
    raw = read_transcript(path)
    parsed = check_transcript(raw, path, agent)
    agent_name = parsed.agent
    session_id = session or parsed.session_id or path.name.split(".")[0]
    filing = project_for(project, parsed, path)
    others, subagents = other_files(path, more or [], agent_name)
    client = CairnClient(url, key)
    prepared = session_parts(raw, others, parsed.cwd or "")
    began = epoch(parsed.started_at) or None  # the session is dated by when it ran, not by this upload
    for number, part in enumerate(prepared.parts, start=1):
        upload_part(
            client.url,
            client.api_key,
            agent=agent_name,
            session_id=session_id,
            project=filing.project,
            part=number,
            data=part.data,
            started_at=began,
        )
    given = len(others) - subagents
    out.print(
        f"[green]uploaded[/green] session {session_id} ({agent_name}, project {esc(filing.project)})"
        + (f" with {subagents} sub-agent transcript(s)" if subagents else "")
        + (f" and {given} other file(s) of the session" if given else "")
        + (f", {prepared.manifests} project file(s)" if prepared.manifests else "")
        + (f", {prepared.redacted} secrets redacted" if prepared.redacted else "")
    )
    if filing.why:
        err.print(f"filed under project {esc(filing.project)}: {esc(filing.why)}; --project to choose")
    if wait:
        _print_outcome(client, wait_for(client, session_id, timeout), full)


def reprocess(
    session_id: Annotated[str, typer.Argument(help="Session id")],
    force: Annotated[bool, typer.Option(help="Redo every stage, not just the unfinished ones")] = False,
    wait: Wait = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 600.0,
    full: Full = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Run the learning pipeline on a session again (e.g. after it failed)."""
    client = CairnClient(url, key)
    client.request("POST", f"/v1/sessions/{session_id}/reprocess", json={"force": force})
    out.print(f"[green]queued[/green] {session_id}")
    if wait:
        time.sleep(0.2)
        _print_outcome(client, wait_for(client, session_id, timeout), full)


def sessions(
    project: Annotated[str | None, typer.Option(help="Only this project")] = None,
    limit: Annotated[int, typer.Option(help="How many", min=1, max=200)] = 20,
    full: Full = False,
    as_json: AsJson = False,
    url: Url = None,
    key: Key = None,
) -> None:
    """Sessions and their learning-pipeline status."""
    params: dict[str, Any] = {"limit": limit}
    if project:
        params["project"] = project
    res = CairnClient(url, key).request("GET", "/v1/sessions", params=params)
    if as_json:
        print_json(res)
        return
    for s in res["items"]:
        stats = s.get("stats") or {}
        made = stats.get("consolidate") or {}
        error = stats.get("error") or {}
        learned = f"+{made.get('created', 0)} ~{made.get('merged', 0)}" if made else "-"
        note = f"  {error.get('stage')}: {cut(error.get('message'), full)}" if error else ""
        out.print(
            f"{s['id']}  {esc(s['project'] or '-')}  {s['agent']}  {s['status']}  "
            f"parts {len(s['transcript_keys'])}  learned {learned}  {(s['updated_at'] or '')[:19]}{esc(note)}"
        )
    if not res["items"]:
        out.print("[dim]no sessions yet[/dim]")

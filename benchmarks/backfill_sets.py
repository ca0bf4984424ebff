"""A multi-session set's sessions laid out as their agents store them, then learned through `cairn backfill`'s
path: what `multi_session_eval.py` ingests with by default (issue 43).

`lay_out` writes a fake HOME from a set's transcripts, their bytes unchanged, where each agent keeps them:
- Claude Code: `.claude/projects/<folder>/<id>.jsonl`, the folder named from the cwd the session started in
  (its first record naming one), every character but a letter or digit made `-`;
- Codex: `.codex/sessions/YYYY/MM/DD/rollout-<stamp>-<id>.jsonl`, dated by its `session_meta`;
- Gemini CLI: `.gemini/tmp/<projectHash>/chats/session-<stamp>-<id8>.json[l]`, the sha256-named folder the
  session's own `projectHash` names (the layout before 0.61);
- OpenCode: the set keeps `opencode export` documents of sessions OpenCode 1.4 recorded, a version that stores
  them in its SQLite database (1.2 and later), so each becomes its rows there: the project, the session, and
  a row per message and part, each `data` the export's object less the ids its columns hold, as OpenCode
  writes them (the tables' CREATE statements as OpenCode made them, from tests/fixtures/agent_stores). The
  export holds everything those rows do; `read_db_session` then gives the plugin's lines of the same messages.

The project a backfill runs for is the repository the set's sessions ran in: the cwd most of them name, with
the git remote a Codex `session_meta` names (`recorded_project`). It is not on this machine, so
`Project.holds` judges a session by its path under that root. `ingest` then scans the HOME
(`backfill.scan`), says which of the set's sessions it found, and learns them oldest first
(`backfill.learn`) against the local store served over HTTP on 127.0.0.1, each learned before the next. A
session the scan does not find because it started in another repository is learned the way its owner would
add it: the same backfill run in the folder it started in, filed under this project (`--project`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cairn.capture import backfill
from cairn.capture.backfill import Outcome
from cairn.capture.ledger import Ledger
from cairn.capture.stores import Project, StoredSession, claude_folder, epoch, oldest_first
from cairn.projects import normalise_remote

ROOT = Path(__file__).resolve().parents[1]
OPENCODE_SCHEMA = ROOT / "tests" / "fixtures" / "agent_stores" / "home" / ".local" / "share" / "opencode"
WAIT_S = 1800.0  # for one session to be learned (a 4 MB transcript on a busy 2-core box)
# a set's agent name (set.json, or metadata.json's "Claude Code", folded) -> the agent name Cairn uses
AGENTS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "copilot": "copilot-cli",
    "gemini-cli": "gemini-cli",
    "opencode": "opencode",
    "cursor": "cursor",
}


def agent_name(name: str) -> str:
    """Cairn's agent name for a set's ("codex", "gemini-cli", or metadata.json's "Gemini CLI")."""
    folded = name.strip().lower().replace(" ", "-")
    return AGENTS.get(folded, folded)


def transcript(set_dir: Path, s: dict) -> bytes:
    """A session's transcript as recorded, from the plain file or its gzipped copy."""
    return read_recorded(set_dir / s["file"])


def subagent_files(s: dict) -> list[str]:
    """The session's sub-agent transcripts (set.json's `extra`, PROTOCOL.md), not its metadata.json."""
    return [f for f in s.get("extra") or [] if not f.endswith("metadata.json")]


def read_recorded(path: Path) -> bytes:
    """A transcript's bytes, from the plain file or its gzipped copy `<file>.gz`."""
    if path.is_file():
        return path.read_bytes()
    gz = path.with_name(path.name + ".gz")
    if gz.is_file():
        return gzip.decompress(gz.read_bytes())
    raise SystemExit(f"no such file: {path} (nor {gz.name})")


# --- where each session ran --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Recorded:
    """What a transcript says of where it ran: the folder it started in, and a git remote if it names one."""

    cwd: str = ""
    remote: str | None = None


def recorded(agent: str, raw: bytes) -> Recorded:
    if agent == "claude-code":
        for line in raw.splitlines():
            record = _json(line)
            if isinstance(record.get("cwd"), str) and record["cwd"]:
                return Recorded(record["cwd"])
    elif agent == "codex":
        meta = _codex_meta(raw)
        git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
        return Recorded(str(meta.get("cwd") or ""), git.get("repository_url"))
    elif agent == "opencode":
        return Recorded(str(_json(raw).get("info", {}).get("directory") or ""))
    return Recorded()  # Gemini CLI names only the sha256 of its root


def recorded_project(set_dir: Path, spec: dict) -> Project:
    """The repository the set's sessions ran in: the cwd most of them started in, and its remote."""
    seen = [recorded(agent_name(s["agent"]), transcript(set_dir, s)) for s in spec["sessions"]]
    cwds = Counter(r.cwd for r in seen if r.cwd)
    if not cwds:
        raise SystemExit(f"{set_dir.name}: no session names the folder it ran in")
    root = cwds.most_common(1)[0][0]
    remote = next((r.remote for r in seen if r.remote and r.cwd == root), None)
    return Project(root=root, key=spec["project"], remote=normalise_remote(remote) if remote else None)


def _json(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _codex_meta(raw: bytes) -> dict[str, Any]:
    for line in raw.splitlines()[:16]:
        record = _json(line)
        if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
            return record["payload"]
    return {}


# --- the fake HOME -----------------------------------------------------------------------------------
def lay_out(set_dir: Path, spec: dict, home: Path) -> Project:
    """Every session of the set where its agent would have stored it, under `home`; returns the project."""
    project = recorded_project(set_dir, spec)
    opencode: list[dict[str, Any]] = []
    for s in spec["sessions"]:
        agent, raw = agent_name(s["agent"]), transcript(set_dir, s)
        subagents = [(f, read_recorded(set_dir / f)) for f in subagent_files(s)]
        if agent == "claude-code":
            cwd = recorded(agent, raw).cwd or project.root
            folder = home / ".claude" / "projects" / claude_folder(cwd)
            _write(folder / f"{s['id']}.jsonl", raw)
            for f, data in subagents:  # Claude Code 2.x: <session>/subagents/*.jsonl
                _write(folder / s["id"] / "subagents" / Path(f.removesuffix(".gz")).name, data)
        elif agent == "codex":
            for data in (raw, *(data for _, data in subagents)):  # a worker thread: a rollout of its own
                meta = _codex_meta(data)
                when = datetime.fromtimestamp(epoch(meta.get("timestamp")), UTC)
                name = f"rollout-{when:%Y-%m-%dT%H-%M-%S}-{meta.get('id') or s['id']}.jsonl"
                _write(home / ".codex" / "sessions" / f"{when:%Y/%m/%d}" / name, data)
        elif subagents:
            raise SystemExit(f"{set_dir.name}: no store layout for {agent} sub-agent files")
        elif agent == "gemini-cli":
            doc = _gemini_head(raw, s["file"])
            folder = doc.get("projectHash") or hashlib.sha256(project.root.encode()).hexdigest()
            when = datetime.fromtimestamp(epoch(doc.get("startTime")), UTC)
            suffix = ".jsonl" if s["file"].endswith(".jsonl") else ".json"
            name = f"session-{when:%Y-%m-%dT%H-%M}-{s['id'][:8]}{suffix}"
            _write(home / ".gemini" / "tmp" / folder / "chats" / name, raw)
        elif agent == "opencode":
            opencode.append(_json(raw))
        else:
            raise SystemExit(f"{set_dir.name}: no store layout for {agent} sessions")
    if opencode:
        opencode_db(home / ".local" / "share" / "opencode" / "opencode.db", opencode)
    return project


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _gemini_head(raw: bytes, name: str) -> dict[str, Any]:
    return _json(raw.split(b"\n", 1)[0] if name.endswith(".jsonl") else raw)


def opencode_db(db: Path, exports: list[dict[str, Any]]) -> None:
    """OpenCode's database holding these `opencode export` documents' sessions."""
    schema = (OPENCODE_SCHEMA / "opencode.sql").read_text()
    creates = [s.strip() + ";" for s in schema.split(";") if s.strip().startswith("CREATE TABLE")]
    db.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        for create in creates:
            conn.execute(create)
        for doc in exports:
            _opencode_rows(conn, doc)


def _opencode_rows(conn: sqlite3.Connection, doc: dict[str, Any]) -> None:
    info = doc["info"]
    created, updated = _times(info)
    conn.execute(
        "INSERT OR IGNORE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
        "VALUES (?, ?, 'git', ?, ?, '[]')",
        (info["projectID"], info["directory"], created, updated),
    )
    conn.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
        "time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            info["id"],
            info["projectID"],
            info.get("parentID"),
            info.get("slug") or "",
            info["directory"],
            info.get("title") or "",
            info.get("version") or "",
            created,
            updated,
        ),
    )
    for message in doc["messages"]:
        m = message["info"]
        m_created, m_updated = _times(m)
        conn.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
            (m["id"], info["id"], m_created, m_updated, _less(m, "id", "sessionID")),
        )
        for part in message["parts"]:
            p_created, p_updated = _times(part, m_created)
            conn.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    part["id"],
                    m["id"],
                    info["id"],
                    p_created,
                    p_updated,
                    _less(part, "id", "sessionID", "messageID"),
                ),
            )


def _times(obj: dict[str, Any], fallback: int = 0) -> tuple[int, int]:
    t = obj.get("time") if isinstance(obj.get("time"), dict) else {}
    created = t.get("created") or t.get("start") or fallback
    return int(created), int(t.get("updated") or t.get("completed") or t.get("end") or created)


def _less(obj: dict[str, Any], *ids: str) -> str:
    return json.dumps(
        {k: v for k, v in obj.items() if k not in ids}, ensure_ascii=False, separators=(",", ":")
    )


# --- finding -----------------------------------------------------------------------------------------
@dataclass
class Found:
    """What the scan found of the set: its sessions in learning order, and how it got them."""

    project: Project
    plan: list[StoredSession]
    scanned: int  # of the set's sessions, found by the scan for the project
    expected: int
    elsewhere: dict[str, str] = field(default_factory=dict)  # key -> the folder it started in
    missing: list[str] = field(default_factory=list)  # never found
    strangers: list[str] = field(default_factory=list)  # found, not the set's

    @property
    def line(self) -> str:
        text = f"found {self.scanned} of {self.expected}"
        if self.elsewhere:
            text += f"; {len(self.elsewhere)} started in another repository, added from there: " + ", ".join(
                f"{k.split(':', 1)[1][:8]} ({v})" for k, v in self.elsewhere.items()
            )
        if self.missing:
            text += "; NOT FOUND: " + ", ".join(k.split(":", 1)[1][:8] for k in self.missing)
        if self.strangers:
            text += "; not the set's: " + ", ".join(k.split(":", 1)[1][:8] for k in self.strangers)
        return text


def expected_keys(spec: dict) -> list[str]:
    return [f"{agent_name(s['agent'])}:{s['id']}" for s in spec["sessions"]]


def find(set_dir: Path, spec: dict, home: Path) -> Found:
    """Lay the set out under `home` and scan it as `cairn backfill` run in the project's root does."""
    project = lay_out(set_dir, spec, home)
    expected = expected_keys(spec)
    scanned = list(backfill.scan(project, home, {}).sessions)
    keys = {s.key for s in scanned}
    found = Found(project, scanned, len(keys & set(expected)), len(expected))
    found.strangers = sorted(keys - set(expected))
    for s, key in zip(spec["sessions"], expected, strict=True):
        if key in keys:
            continue
        cwd = recorded(agent_name(s["agent"]), transcript(set_dir, s)).cwd
        there = Project(root=cwd, key=project.key) if cwd else None
        hit = [x for x in backfill.scan(there, home, {}).sessions if x.key == key] if there else []
        if hit:
            found.plan += hit
            found.elsewhere[key] = cwd
        else:
            found.missing.append(key)
    found.plan = oldest_first(found.plan)
    return found


# --- learning ----------------------------------------------------------------------------------------
class Server:
    """The container's app served by uvicorn on 127.0.0.1 in a thread (the settings carry its port)."""

    def __init__(self, container) -> None:
        import uvicorn
        from cairn.api.app import create_app

        self.url = f"http://127.0.0.1:{container.settings.port}"
        self._server = uvicorn.Server(
            uvicorn.Config(
                create_app(container), host="127.0.0.1", port=container.settings.port, log_level="error"
            )
        )
        self._thread = threading.Thread(target=self._server.run, name="bench-server", daemon=True)

    def __enter__(self) -> str:
        import httpx

        self._thread.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return self.url
            time.sleep(0.05)
        raise SystemExit(f"the local server did not come up at {self.url}")

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Timed:
    """The backfill's events: each session's seconds, from the end of the one before (its reading, the
    check that it parses, the upload, and the wait until it is learned)."""

    def __init__(self, verbose: bool) -> None:
        self.verbose, self.seconds = verbose, {}
        self._last = time.perf_counter()

    def sending(self, s: StoredSession, part: int, total: int) -> None:
        pass

    def waiting(self, seconds: float, why: str) -> None:
        print(f"  waiting {seconds:.0f} s: {why}", flush=True)

    def finished(self, outcome: Outcome) -> None:
        now = time.perf_counter()
        took, self._last = now - self._last, now
        self.seconds[outcome.session.key] = took
        if self.verbose:
            s = outcome.session
            print(f"  {outcome.how} {s.session_id[:8]} ({s.agent}) in {took:.1f} s", flush=True)


@contextlib.contextmanager
def cairn_home(path: Path) -> Iterator[None]:
    """The capture state the backfill hands to the hooks goes here, not into the user's Cairn home."""
    before = os.environ.get("CAIRN_HOME")
    os.environ["CAIRN_HOME"] = str(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CAIRN_HOME", None)
        else:
            os.environ["CAIRN_HOME"] = before


def ingest(
    container, set_dir: Path, spec: dict, scratch: Path, verbose: bool
) -> tuple[str, list[dict], float, str]:
    """Every session of the set through the backfill path into one new team; returns the team, a row per
    session in the set's order (one not learned keeps its reason), the seconds, and what the scan found."""
    team, _, key = container.keys.create_team("bench", "dev")
    found = find(set_dir, spec, scratch / "home")
    print(f"  scan: {found.line}", flush=True)
    timed = Timed(verbose)
    with Server(container) as url, cairn_home(scratch / "cairn"):
        ledger = Ledger(scratch / "cairn" / "ledger.json", url)
        t0 = time.perf_counter()
        outcomes = backfill.learn(
            [(s, spec["project"]) for s in found.plan],
            backfill.Api(url, key),
            ledger,
            timed,
            wait_s=WAIT_S,
        )
        ingest_s = time.perf_counter() - t0
    by_key = {o.session.key: o for o in outcomes}
    rows = []
    for s, k in zip(spec["sessions"], expected_keys(spec), strict=True):
        row: dict[str, Any] = {"session": s["id"][:8], "agent": s["agent"]}
        o = by_key.get(k)
        row["seconds"] = round(timed.seconds.get(k, 0.0), 2)
        why = _not_learned(o)
        if why:
            row["refused"] = why
            print(f"  {s['id'][:8]} ({s['agent']}) refused: {why}", flush=True)
        rows.append(row)
    return team.id, rows, ingest_s, found.line


def _not_learned(o: Outcome | None) -> str:
    """Why a session was not learned, in a line; empty when it was."""
    if o is None:
        return "not found by the scan"
    if o.how == "learned" and o.status == "learned":
        return ""
    error = o.stats.get("error")
    if isinstance(error, dict):
        return f"{error.get('stage', '?')}: {error.get('message', error)}"
    return str(error or o.detail or f"{o.how} ({o.status or 'not learned'})")

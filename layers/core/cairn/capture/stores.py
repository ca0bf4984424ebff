"""Find a project's past sessions in each agent's own store, for `cairn backfill`.

Where the agents keep them (under HOME, or where the agent's own variable moves it):
- Claude Code: `~/.claude/projects/<folder>/<session>.jsonl` (`CLAUDE_CONFIG_DIR` moves `~/.claude`), the
  folder being the working directory with every other character than a letter or digit made `-`; its
  sub-agents in `<session>/subagents/*.jsonl`, or, before 2.x, `agent-*.jsonl` beside it naming the session.
- Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]` and `archived_sessions/`; the first line,
  `session_meta`, names the session, its `cwd` and git remote, and for a worker thread its parent thread.
- Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.json[l]`, `<project>` being a short name with the
  root in `.project_root` beside `chats/` (0.61), or the sha256 of the root (older); the first record's
  `projectHash` is that sha256 in both.
- Copilot CLI: `$COPILOT_HOME/session-state/<id>/events.jsonl`, whose `session.start` names cwd, git root
  and GitHub repository.
- OpenCode: `stores_opencode`.

A session is this project's when the folder it ran in is the repository or inside it, or is a folder here
whose project key is this one's (another clone, a `.cairn.toml`), or when it names the project's git remote,
or Gemini's hash of the root. Scanning stays cheap: a Claude folder is judged by one transcript's head,
a Gemini folder by its `.project_root`, and only the head of any transcript is read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.capture.locate import session_meta
from cairn.capture.subagents import subagent_files
from cairn.projects import git_remote, normalise_remote, project_key
from cairn.transcripts.codex import worker_parent

HEAD_LINES = 64  # lines of a transcript read while scanning, at most
HEAD_LINE_BYTES = 1_048_576
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class StoredSession:
    """One past session as its agent stored it; `others` are its further files, learned with it."""

    agent: str
    session_id: str
    path: Path  # the main transcript (for OpenCode's database: the database)
    started: float  # epoch seconds
    size: int  # bytes of all its files
    cwd: str = ""
    others: tuple[Path, ...] = ()
    children: tuple[str, ...] = ()  # OpenCode: child sessions read from the same database
    source: str = "file"  # how to read it: "file", or an OpenCode store ("opencode-db", "opencode-storage")

    @property
    def key(self) -> str:
        return f"{self.agent}:{self.session_id}"

    @property
    def parts(self) -> int:
        return 1 + len(self.others) + len(self.children)


@dataclass(frozen=True, slots=True)
class Scan:
    sessions: tuple[StoredSession, ...]  # this project's, oldest first
    foreign: int  # sessions of other projects seen and left out
    stores: tuple[str, ...]  # the agents whose store exists here


@dataclass
class Project:
    """The project being backfilled, and the verdicts on folders already judged (scans ask often)."""

    root: str
    key: str
    remote: str | None = None
    _verdicts: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, folder: str | Path) -> Project:
        here = Path(folder).resolve()
        root = next((d for d in (here, *here.parents) if (d / ".git").exists()), here)
        url = git_remote(root)
        return cls(str(root), project_key(here), normalise_remote(url) if url else None)

    def holds(self, cwd: str | None) -> bool:
        """Whether a session run in `cwd` is this project's."""
        if not cwd:
            return False
        if cwd not in self._verdicts:
            real = os.path.realpath(cwd)
            if os.path.isdir(real):
                verdict = real == self.root or project_key(real) == self.key
            else:  # not on this machine (any more): by where it was
                verdict = real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)
            self._verdicts[cwd] = verdict
        return self._verdicts[cwd]

    def named_by(self, remote: str | None) -> bool:
        return bool(remote and self.remote and normalise_remote(remote) == self.remote)

    def hashed(self, digest: str | None) -> bool:
        """Gemini CLI's project hash: sha256 of the root's path."""
        return bool(digest) and digest in {
            hashlib.sha256(self.root.encode()).hexdigest(),
            hashlib.sha256(self.root.rstrip(os.sep).encode()).hexdigest(),
        }


# --- reading heads -----------------------------------------------------------------------------------
def head_records(path: Path, lines: int = HEAD_LINES) -> Iterator[dict[str, Any]]:
    """The JSON objects among a transcript's first lines (a bad or cut line is skipped)."""
    try:
        with path.open("rb") as f:
            for _ in range(lines):
                line = f.readline(HEAD_LINE_BYTES)
                if not line:
                    return
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    yield obj
    except OSError:
        return


def first_record(path: Path, want: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    return next((r for r in head_records(path) if want(r)), None)


def epoch(stamp: object, fallback: float = 0.0) -> float:
    """An ISO-8601 time or epoch milliseconds as epoch seconds."""
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        return stamp / 1000 if stamp > 1e11 else float(stamp)
    if isinstance(stamp, str) and stamp:
        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return fallback


def _size(*paths: Path) -> int:
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _dirs(folder: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(folder) if e.is_dir())
    except OSError:
        return []


# --- Claude Code -------------------------------------------------------------------------------------
def claude_folder(cwd: str) -> str:
    """The folder Claude Code keeps a working directory's sessions in."""
    return _NOT_ALNUM.sub("-", cwd)


def _has_cwd(record: dict[str, Any]) -> bool:
    return isinstance(record.get("cwd"), str) and bool(record.get("cwd"))


def scan_claude(base: Path, project: Project) -> tuple[list[StoredSession], int]:
    found: list[StoredSession] = []
    foreign = 0
    for folder in _dirs(base / "projects"):
        transcripts = sorted(p for p in folder.glob("*.jsonl") if not p.name.startswith("agent-"))
        if not transcripts:
            continue
        if not _claude_folder_is(folder, transcripts, project):
            foreign += len(transcripts)
            continue
        by_id: dict[str, StoredSession] = {}
        for path in transcripts:
            head = first_record(path, _has_cwd)
            if head is None or not project.holds(head["cwd"]):
                foreign += head is not None
                continue
            # the file is named by its session's id, as the hooks know it; the head's `sessionId` may be
            # the session it continues (Claude Code replays a compacted session's end into the next one)
            sid = path.stem
            others = tuple(subagent_files(path))
            started = epoch(head.get("timestamp"), _mtime(path))
            by_id[sid] = StoredSession(
                "claude-code", sid, path, started, _size(path, *others), head["cwd"], others
            )
        found += _with_agent_files(folder, by_id)
    return found, foreign


def _claude_folder_is(folder: Path, transcripts: list[Path], project: Project) -> bool:
    """Judge a folder by its name when it is the root's or under it, else by one transcript's cwd."""
    name = claude_folder(project.root)
    if folder.name == name or folder.name.startswith(name + "-"):
        return True
    for path in transcripts[:3]:
        head = first_record(path, _has_cwd)
        if head is not None:
            return project.holds(head["cwd"])
    return False


def _with_agent_files(folder: Path, by_id: dict[str, StoredSession]) -> list[StoredSession]:
    """Claude Code before 2.x kept a sub-agent's transcript as `agent-*.jsonl` beside its session's."""
    for path in sorted(folder.glob("agent-*.jsonl")):
        head = first_record(path, lambda r: isinstance(r.get("sessionId"), str))
        owner = by_id.get(str(head["sessionId"])) if head else None
        if owner is not None:
            by_id[owner.session_id] = replace(
                owner, others=(*owner.others, path), size=owner.size + _size(path)
            )
    return list(by_id.values())


# --- Codex -------------------------------------------------------------------------------------------
def _rollouts(home: Path) -> Iterator[Path]:
    for pattern in ("sessions/*/*/*/rollout-*.jsonl", "sessions/*/*/*/rollout-*.jsonl.zst"):
        yield from home.glob(pattern)
    for pattern in ("archived_sessions/rollout-*.jsonl", "archived_sessions/rollout-*.jsonl.zst"):
        yield from home.glob(pattern)


def scan_codex(home: Path, project: Project) -> tuple[list[StoredSession], int]:
    mine: list[tuple[StoredSession, str | None]] = []
    foreign = 0
    for path in sorted(set(_rollouts(home))):
        meta = session_meta(path)
        sid = meta.get("id") or meta.get("session_id")
        if not isinstance(sid, str):
            continue
        git = meta.get("git") if isinstance(meta.get("git"), Mapping) else {}
        cwd = str(meta.get("cwd") or "")
        if not (project.holds(cwd) or project.named_by(git.get("repository_url"))):
            foreign += 1
            continue
        session = StoredSession(
            "codex", sid, path, epoch(meta.get("timestamp"), _mtime(path)), _size(path), cwd
        )
        mine.append((session, worker_parent(meta)))
    return _attach_children(mine), foreign


def _attach_children(mine: list[tuple[StoredSession, str | None]]) -> list[StoredSession]:
    """A worker thread is learned with the session that spawned it (after it, oldest first); one whose
    parent is not here stands alone."""
    by_id = {s.session_id: s for s, parent in mine if parent is None}
    alone: list[StoredSession] = []
    for child, parent in sorted(mine, key=lambda m: m[0].started):
        owner = by_id.get(parent) if parent else None
        if parent is None:
            continue
        if owner is None:
            alone.append(child)
            continue
        by_id[owner.session_id] = replace(
            owner, others=(*owner.others, child.path), size=owner.size + child.size
        )
    return [*by_id.values(), *alone]


# --- Gemini CLI --------------------------------------------------------------------------------------
def scan_gemini(base: Path, project: Project) -> tuple[list[StoredSession], int]:
    found: list[StoredSession] = []
    foreign = 0
    for folder in _dirs(base / "tmp"):
        chats = sorted([*folder.glob("chats/session-*.jsonl"), *folder.glob("chats/session-*.json")])
        if not chats:
            continue
        if not _gemini_folder_is(folder, chats[0], project):
            foreign += len(chats)
            continue
        for path in chats:
            head = _gemini_head(path)
            sid = head.get("sessionId")
            if not isinstance(sid, str):
                continue
            started = epoch(head.get("startTime"), _mtime(path))
            found.append(StoredSession("gemini-cli", sid, path, started, _size(path), project.root))
    return found, foreign


def _gemini_folder_is(folder: Path, chat: Path, project: Project) -> bool:
    try:
        root = (folder / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        root = ""
    if root:
        return project.holds(root)
    if _SHA256.match(folder.name):
        return project.hashed(folder.name)
    return project.hashed(_gemini_head(chat).get("projectHash"))


def _gemini_head(path: Path) -> dict[str, Any]:
    """The metadata record: the first line of a JSONL session, or the whole document of a legacy `.json`."""
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}
    return next(head_records(path, 1), {})


# --- Copilot CLI -------------------------------------------------------------------------------------
def scan_copilot(home: Path, project: Project) -> tuple[list[StoredSession], int]:
    found: list[StoredSession] = []
    foreign = 0
    for folder in _dirs(home / "session-state"):
        path = folder / "events.jsonl"
        head = first_record(path, lambda r: r.get("type") == "session.start")
        data = head.get("data") if head else None
        if not isinstance(data, Mapping):
            continue
        context = data.get("context") if isinstance(data.get("context"), Mapping) else {}
        cwd = str(context.get("cwd") or "")
        remote = _github(context)
        if not (project.holds(cwd) or project.holds(context.get("gitRoot")) or project.named_by(remote)):
            foreign += 1
            continue
        sid = str(data.get("sessionId") or folder.name)
        started = epoch(data.get("startTime"), _mtime(path))
        found.append(StoredSession("copilot-cli", sid, path, started, _size(path), cwd))
    return found, foreign


def _github(context: Mapping[str, Any]) -> str | None:
    """`repository: owner/name` on `repositoryHost` (github.com when not said) as a remote."""
    repo = context.get("repository")
    if not isinstance(repo, str) or "/" not in repo:
        return None
    return f"{context.get('repositoryHost') or 'github.com'}/{repo}"


# --- all of them -------------------------------------------------------------------------------------
def agent_homes(home: Path, environ: Mapping[str, str]) -> dict[str, Path]:
    """Each agent's store under `home`, or where the agent's own variable puts it."""
    data = Path(environ["XDG_DATA_HOME"]) if environ.get("XDG_DATA_HOME") else home / ".local" / "share"
    return {
        "claude-code": Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude"),
        "codex": Path(environ.get("CODEX_HOME") or home / ".codex"),
        "gemini-cli": home / ".gemini",
        "opencode": data / "opencode",
        "copilot-cli": Path(environ.get("COPILOT_HOME") or home / ".copilot"),
    }


def continued(sessions: list[StoredSession]) -> list[StoredSession]:
    """Files of one session id (a session resumed into a new file) are one session: the oldest file is
    its transcript, the later ones its continued parts."""
    groups: dict[str, list[StoredSession]] = {}
    for s in sessions:
        groups.setdefault(s.key, []).append(s)
    out = []
    for group in groups.values():
        first, *later = sorted(group, key=lambda s: (s.started, str(s.path)))
        for s in later:
            first = replace(first, others=(*first.others, s.path, *s.others), size=first.size + s.size)
        out.append(first)
    return out


def oldest_first(sessions: list[StoredSession]) -> list[StoredSession]:
    return sorted(sessions, key=lambda s: (s.started, s.agent, s.session_id))

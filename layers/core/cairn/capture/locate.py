"""Find the transcript a hook is about: the path the agent gave, or, for Codex and Copilot CLI, its file.

Copilot CLI's `sessionEnd` hook gives only the session id; its log is
`$COPILOT_HOME/session-state/<session id>/events.jsonl` (`~/.copilot` by default). Cursor's CLI hooks give
`transcript_path: null`; its transcript is found by conversation id under `~/.cursor/projects/`.

Codex's Stop hook may give an empty `transcript_path`. Its rollouts live under
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl` (or `.jsonl.zst`) and start with a
`session_meta` line that names the session id and the working directory. We take the newest rollout
of the session, else the newest one started in the hook's working directory.
"""

from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCAN_LIMIT = 300
_SAFE_ID = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
)  # a session id that is one path segment  # newest rollouts looked at; older sessions do not stop now


@dataclass(frozen=True, slots=True)
class Located:
    path: Path
    session_id: str | None
    cwd: str | None


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def copilot_home() -> Path:
    return Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")


def locate(agent: str, transcript_path: str, session_id: str, cwd: str) -> Located | None:
    if transcript_path:
        path = Path(transcript_path).expanduser()
        if path.is_file():
            meta = session_meta(path) if agent == "codex" else {}
            return Located(path, session_id or meta.get("id"), cwd or meta.get("cwd"))
    if agent == "codex":
        return find_codex_rollout(session_id, cwd)
    if agent == "copilot-cli":
        return find_copilot_events(session_id, cwd)
    if agent == "cursor":
        return find_cursor_transcript(session_id, cwd)
    return None


def find_cursor_transcript(session_id: str, cwd: str) -> Located | None:
    """Cursor's CLI hooks give `transcript_path: null`; its transcripts are
    `~/.cursor/projects/<workspace slug>/agent-transcripts/<id>.jsonl` (or `<id>/<id>.jsonl`).
    Documented by public integrations, not checked against a Cursor build here."""
    if not session_id or not _SAFE_ID.match(session_id):
        return None
    projects = Path.home() / ".cursor" / "projects"
    for pattern in (
        f"*/agent-transcripts/{session_id}/{session_id}.jsonl",
        f"*/agent-transcripts/{session_id}.jsonl",
    ):
        for path in sorted(projects.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True):
            return Located(path, session_id, cwd or None)
    return None


def find_copilot_events(session_id: str, cwd: str) -> Located | None:
    """Copilot CLI's `sessionEnd` gives no transcript path: its log is `session-state/<id>/events.jsonl`."""
    if not session_id or not _SAFE_ID.match(session_id):
        return None
    path = copilot_home() / "session-state" / session_id / "events.jsonl"
    return Located(path, session_id, cwd or None) if path.is_file() else None


def _rollouts(root: Path) -> list[Path]:
    patterns = ("*/*/*/rollout-*.jsonl", "*/*/*/rollout-*.jsonl.zst")
    files = [p for pattern in patterns for p in root.glob(pattern)]
    files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return files[:SCAN_LIMIT]


def find_codex_rollout(session_id: str, cwd: str) -> Located | None:
    rollouts = _rollouts(codex_home() / "sessions")
    if session_id:
        for path in rollouts:
            if session_id in path.name:
                meta = session_meta(path)
                return Located(path, meta.get("id") or session_id, meta.get("cwd") or cwd)
        for path in rollouts:
            meta = session_meta(path)
            if meta.get("id") == session_id:
                return Located(path, session_id, meta.get("cwd") or cwd)
    if cwd:
        wanted = os.path.realpath(cwd)
        for path in rollouts:
            meta = session_meta(path)
            if meta.get("cwd") and os.path.realpath(str(meta["cwd"])) == wanted:
                return Located(path, meta.get("id"), str(meta["cwd"]))
    return None


def first_line(path: Path, limit: int = 1_048_576) -> bytes:
    with path.open("rb") as f:
        if path.name.endswith(".zst"):
            import zstandard

            reader = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(f))  # type: ignore[arg-type]
            return reader.readline(limit)
        return f.readline(limit)


def session_meta(path: Path) -> dict[str, Any]:
    """The payload of a rollout's `session_meta` line ({} when the file does not start with one)."""
    try:
        obj = json.loads(first_line(path))
    except (OSError, ValueError):
        return {}
    if isinstance(obj, dict) and obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
        return obj["payload"]
    return {}


def read_from(path: Path, offset: int) -> bytes:
    """The transcript's bytes after `offset` (decompressed for `.zst`, where offsets count plain bytes)."""
    if path.name.endswith(".zst"):
        import zstandard

        with path.open("rb") as f:
            data = zstandard.ZstdDecompressor().stream_reader(f).read()
        return data[offset:]
    with path.open("rb") as f:
        f.seek(offset)
        return f.read()

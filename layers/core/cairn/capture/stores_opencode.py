"""OpenCode's past sessions, wherever its versions kept them, as the JSON lines Cairn's plugin writes.

- 1.2 and later: one SQLite database, `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share` by default):
  `session(id, parent_id, directory, time_created, ...)`, `message(id, session_id, time_created, data)` and
  `part(id, message_id, session_id, data)`, `data` being the API's object less its ids (seen in 1.18.33).
- Before 1.2: JSON files, `storage/session/<project>/<id>.json` (with `directory`, `parentID`, `time`),
  `storage/message/<session>/<id>.json` and `storage/part/<message>/<id>.json`, each the API's object.
- Cairn's plugin: `cairn/<session>.jsonl`, what it exported of a session it saw end.

A child session (a sub-agent's, `parent_id`) is learned with its parent, as further parts. The database is
opened read-only, so a running OpenCode is not disturbed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from cairn.capture.stores import Project, StoredSession, epoch, first_record

DB = "opencode.db"
AGENT = "opencode"


def scan_opencode(data: Path, project: Project) -> tuple[list[StoredSession], int]:
    found: dict[str, StoredSession] = {}
    foreign = 0
    for scanner in (_scan_db, _scan_storage, _scan_exports):
        mine, theirs = scanner(data, project)
        foreign += theirs
        for s in mine:
            found.setdefault(s.session_id, s)  # the database first: the others may be older copies
    return list(found.values()), foreign


# --- the database (1.2+) -----------------------------------------------------------------------------
def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)


def _scan_db(data: Path, project: Project) -> tuple[list[StoredSession], int]:
    db = data / DB
    if not db.is_file():
        return [], 0
    try:
        with closing(_connect(db)) as conn:
            rows = conn.execute(
                "SELECT s.id, s.parent_id, s.directory, s.time_created, p.worktree "
                "FROM session s LEFT JOIN project p ON p.id = s.project_id"
            ).fetchall()
            mine = [r for r in rows if project.holds(r[2]) or project.holds(r[4])]
            sizes = dict(
                conn.execute("SELECT session_id, SUM(LENGTH(data)) FROM part GROUP BY session_id").fetchall()
            )
    except sqlite3.Error:
        return [], 0
    ids = {r[0] for r in mine}
    children: dict[str, list[str]] = {}
    for sid, parent, *_ in sorted(mine, key=lambda r: r[3]):
        if parent in ids:
            children.setdefault(parent, []).append(sid)
    found = []
    for sid, parent, directory, created, _ in mine:
        if parent in ids:
            continue
        kids = tuple(children.get(sid, ()))
        size = sum(int(sizes.get(s) or 0) for s in (sid, *kids))
        found.append(
            StoredSession(
                AGENT, sid, db, epoch(created), size, directory, children=kids, source="opencode-db"
            )
        )
    return found, len(rows) - len(mine)


def read_db_session(db: Path, session_id: str) -> bytes:
    """One session out of the database as the plugin's lines: a session line, then each message whole."""
    with closing(_connect(db)) as conn:
        row = conn.execute("SELECT directory FROM session WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return b""
        messages = conn.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,)
        ).fetchall()
        parts: dict[str, list[dict[str, Any]]] = {}
        for pid, mid, pdata in conn.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id", (session_id,)
        ):
            part = {**_obj(pdata), "id": pid, "sessionID": session_id, "messageID": mid}
            parts.setdefault(mid, []).append(part)
    lines: list[dict[str, Any]] = [{"type": "session", "id": session_id, "directory": row[0]}]
    for mid, mdata in messages:
        info = {**_obj(mdata), "id": mid, "sessionID": session_id}
        lines.append({"info": info, "parts": parts.get(mid, [])})
    return jsonl(lines)


def jsonl(records: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for r in records
    )


def _obj(text: str | bytes) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --- the JSON files (before 1.2) ---------------------------------------------------------------------
def _scan_storage(data: Path, project: Project) -> tuple[list[StoredSession], int]:
    storage = data / "storage"
    infos = [(p, _read(p)) for p in sorted(storage.glob("session/*/*.json"))]
    mine = [(p, i) for p, i in infos if isinstance(i.get("id"), str) and project.holds(i.get("directory"))]
    ids = {i["id"] for _, i in mine}
    children: dict[str, list[str]] = {}
    for _, info in sorted(mine, key=lambda m: epoch(_created(m[1]))):
        if info.get("parentID") in ids:
            children.setdefault(info["parentID"], []).append(info["id"])
    found = []
    for path, info in mine:
        if info.get("parentID") in ids:
            continue
        kids = tuple(children.get(info["id"], ()))
        size = sum(_storage_size(storage, s) for s in (info["id"], *kids))
        found.append(
            StoredSession(
                AGENT,
                info["id"],
                path,
                epoch(_created(info)),
                size,
                info["directory"],
                (),
                kids,
                "opencode-storage",
            )
        )
    return found, len(infos) - len(mine)


def _created(info: dict[str, Any]) -> object:
    time = info.get("time")
    return time.get("created") if isinstance(time, dict) else None


def _read(path: Path) -> dict[str, Any]:
    try:
        return _obj(path.read_bytes())
    except OSError:
        return {}


def _message_files(storage: Path, session_id: str) -> Iterator[tuple[dict[str, Any], list[Path]]]:
    messages = [_read(p) for p in storage.glob(f"message/{session_id}/*.json")]
    for info in sorted(messages, key=lambda m: (epoch(_created(m)), str(m.get("id")))):
        yield info, sorted(storage.glob(f"part/{info.get('id')}/*.json"))


def _storage_size(storage: Path, session_id: str) -> int:
    return sum(p.stat().st_size for _, parts in _message_files(storage, session_id) for p in parts)


def read_storage_session(session_file: Path, session_id: str) -> bytes:
    """One session out of the JSON files, as the plugin's lines."""
    storage = session_file.parents[2]
    directory = _read(session_file).get("directory") if session_file.stem == session_id else None
    if directory is None:
        found = next(storage.glob(f"session/*/{session_id}.json"), None)
        directory = _read(found).get("directory") if found else ""
    lines: list[dict[str, Any]] = [{"type": "session", "id": session_id, "directory": directory or ""}]
    for info, parts in _message_files(storage, session_id):
        lines.append({"info": info, "parts": [_read(p) for p in parts]})
    return jsonl(lines)


# --- what Cairn's plugin exported --------------------------------------------------------------------
def _scan_exports(data: Path, project: Project) -> tuple[list[StoredSession], int]:
    found, foreign = [], 0
    for path in sorted((data / "cairn").glob("*.jsonl")):
        head = first_record(path, lambda r: r.get("type") == "session")
        if head is None or not isinstance(head.get("id"), str):
            continue
        if not project.holds(head.get("directory")):
            foreign += 1
            continue
        info = first_record(path, lambda r: isinstance(r.get("info"), dict))
        started = epoch(_created(info["info"]) if info else None, path.stat().st_mtime)
        found.append(StoredSession(AGENT, head["id"], path, started, path.stat().st_size, head["directory"]))
    return found, foreign

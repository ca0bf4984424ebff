"""The on-disk spool of transcript parts, and their delivery.

A part is spooled as `<name>.gz` (redacted, gzipped) plus `<name>.json` (agent, session, project,
part number), the JSON written last so a listed part is always complete. Delivery sends parts oldest
first; a part leaves the spool only when the server confirmed it, moves to `dead/` when the server
refused it for good (bad request), and stays when the server is unreachable, to be retried by the
next hook call. `drain_in_background()` is what the session-start hook calls.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cairn.atomic import write_atomic
from cairn.capture.paths import dead_dir, outbox_dir, requests_dir

log = logging.getLogger("cairn.capture")


@dataclass(frozen=True, slots=True)
class SpooledPart:
    meta_path: Path
    agent: str
    session_id: str
    project: str
    part: int

    @property
    def data_path(self) -> Path:
        return self.meta_path.with_suffix(".gz")


def spool(agent: str, session_id: str, project: str, part: int, data: bytes) -> SpooledPart:
    folder = outbox_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{_safe(agent)}__{_safe(session_id)}__{part:06d}"
    meta = folder / f"{name}.json"
    write_atomic(meta.with_suffix(".gz"), data)
    meta_doc = {"agent": agent, "session_id": session_id, "project": project, "part": part}
    write_atomic(meta, json.dumps(meta_doc))
    return SpooledPart(meta, agent, session_id, project, part)


def _safe(value: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in value)


def pending() -> list[SpooledPart]:
    folder = outbox_dir()
    if not folder.is_dir():
        return []
    out = []
    for meta in sorted(folder.glob("*.json")):
        try:
            d = json.loads(meta.read_text())
            out.append(SpooledPart(meta, d["agent"], d["session_id"], d["project"], int(d["part"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def has_work() -> bool:
    """Cheap check (no JSON parsing) for queued requests or parts."""
    for folder in (requests_dir(), outbox_dir()):
        try:
            with os.scandir(folder) as entries:
                if any(e.name.endswith(".json") for e in entries):
                    return True
        except OSError:
            continue
    return False


def deliver(url: str, api_key: str | None, timeout: float = 30.0) -> tuple[int, int]:
    """Send every spooled part; returns (delivered, still pending). Stops at the first unreachable server."""
    from cairn.capture.upload import UploadRefused, UploadUnavailable, upload_part

    delivered = 0
    parts = pending()
    for i, item in enumerate(parts):
        try:
            data = item.data_path.read_bytes()
        except OSError:
            item.meta_path.unlink(missing_ok=True)  # its data is gone; nothing left to send
            continue
        try:
            upload_part(
                url,
                api_key,
                agent=item.agent,
                session_id=item.session_id,
                project=item.project,
                part=item.part,
                data=data,
                timeout=timeout,
            )
        except UploadRefused as exc:
            log.warning("server refused %s part %d: %s", item.session_id, item.part, exc)
            _bury(item, str(exc))
            continue
        except UploadUnavailable as exc:
            log.info("server unavailable, %d parts stay queued: %s", len(parts) - i, exc)
            return delivered, len(parts) - i
        item.meta_path.unlink(missing_ok=True)
        item.data_path.unlink(missing_ok=True)
        delivered += 1
    return delivered, 0


def _bury(item: SpooledPart, reason: str) -> None:
    folder = dead_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.replace(item.data_path, folder / item.data_path.name)
    meta = json.loads(item.meta_path.read_text())
    meta["refused"] = reason
    (folder / item.meta_path.name).write_text(json.dumps(meta))
    item.meta_path.unlink(missing_ok=True)


def drain_in_background() -> bool:
    """Start a detached worker when anything is queued; returns whether one was started. Never raises."""
    try:
        if not has_work():
            return False
        subprocess.Popen(
            [sys.executable, "-m", "cairn.capture.worker"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        return True
    except Exception:  # noqa: BLE001 - called from hooks, which fail open
        return False

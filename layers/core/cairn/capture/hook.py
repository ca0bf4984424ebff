"""The capture hooks agents run when a session stops, ends or compacts: record, hand off, return.

`python -m cairn.capture.hook stop --agent claude-code` (also `cairn hook stop`) reads the hook JSON
on stdin, writes a small request file (which session, which transcript, which directory) and starts
the upload worker as a detached process. It imports only the standard library, prints nothing, and
exits 0 whatever happens, so the agent is never blocked or disturbed; everything slow (reading the
transcript, redaction, gzip, HTTP) happens in the worker, and a failed upload stays queued on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from cairn.atomic import write_atomic
from cairn.capture.paths import requests_dir

EVENTS = ("stop", "session-end", "pre-compact")
AGENTS = ("claude-code", "codex", "gemini-cli", "cursor", "opencode", "copilot-cli", "generic")
MAX_STDIN_BYTES = 1_048_576
STDIN_DEADLINE_S = 1.0


def read_stdin(stdin: BinaryIO, deadline_s: float = STDIN_DEADLINE_S) -> bytes:
    """Hook JSON from stdin, bounded in size and time (an agent that never closes stdin cannot hang us)."""
    try:
        if stdin.isatty():
            return b""
        fd = stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return stdin.read(MAX_STDIN_BYTES) if hasattr(stdin, "read") else b""
    import select

    deadline = time.monotonic() + deadline_s
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_STDIN_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def detect_agent(payload: Mapping[str, Any]) -> str:
    transcript = str(payload.get("transcript_path") or payload.get("transcriptPath") or "").replace("\\", "/")
    if "/.copilot/" in transcript or ("sessionId" in payload and "session_id" not in payload):
        return "copilot-cli"
    if "cursor_version" in payload or "/.cursor/" in transcript:
        return "cursor"
    if "/.codex/" in transcript or "/rollout-" in transcript or "turn_id" in payload:
        return "codex"
    if "/.gemini/" in transcript:
        return "gemini-cli"
    return "claude-code"


def _first(values: object) -> str | None:
    """Cursor names its working directory only as `workspace_roots`."""
    return values[0] if isinstance(values, list) and values and isinstance(values[0], str) else None


def record_request(event: str, agent: str | None, payload: Mapping[str, Any]) -> Path:
    """Write the request atomically (temp file + rename) so the worker never reads half of one."""
    folder = requests_dir()
    folder.mkdir(parents=True, exist_ok=True)
    request = {
        "event": event,
        "agent": agent if agent in AGENTS else detect_agent(payload),
        "session_id": str(
            payload.get("session_id") or payload.get("sessionId") or payload.get("conversation_id") or ""
        ),
        "transcript_path": str(payload.get("transcript_path") or payload.get("transcriptPath") or ""),
        "cwd": str(payload.get("cwd") or _first(payload.get("workspace_roots")) or os.getcwd()),
        "at": time.time(),
    }
    name = f"{time.time_ns()}-{secrets.token_hex(4)}"
    final = folder / f"{name}.json"
    write_atomic(final, json.dumps(request))
    return final


def spawn_worker() -> None:
    """The worker runs detached, in its own session, with no pipes to the agent: we never wait for it."""
    if os.environ.get("CAIRN_CAPTURE_NO_WORKER"):
        return
    subprocess.Popen(
        [sys.executable, "-m", "cairn.capture.worker"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def run_hook(event: str, agent: str | None = None, stdin: BinaryIO | None = None) -> int:
    """Run one capture hook; always returns 0 and writes nothing to stdout."""
    try:
        if event not in EVENTS:
            return 0
        raw = read_stdin(stdin or sys.stdin.buffer)
        payload = json.loads(raw) if raw.strip() else {}
        if isinstance(payload, dict):
            record_request(event, agent, payload)
    except Exception:  # noqa: BLE001, S110 - fail open: a capture problem must never reach the agent
        pass
    with contextlib.suppress(Exception):
        spawn_worker()  # also delivers what earlier calls left queued
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    event = args.pop(0) if args else ""
    agent = None
    if len(args) >= 2 and args[0] == "--agent":
        agent = args[1]
    return run_hook(event, agent)


if __name__ == "__main__":
    sys.exit(main())

"""Where capture keeps its files under the user's Cairn home: requests, the spool, per-session state.

Standard library only (plus platformdirs when CAIRN_HOME is unset): the hook imports this on the
agent's critical path.
"""

from __future__ import annotations

from pathlib import Path

from cairn.userdirs import cairn_home


def capture_dir() -> Path:
    return cairn_home() / "capture"


def requests_dir() -> Path:
    """Hook calls not yet turned into parts: {agent, session_id, transcript_path, cwd}."""
    return capture_dir() / "requests"


def outbox_dir() -> Path:
    """Redacted, gzipped parts waiting for delivery (a `.json` description beside each `.gz`)."""
    return capture_dir() / "spool" / "outbox"


def dead_dir() -> Path:
    """Parts the server refused for good (kept for inspection, never deleted by Cairn)."""
    return capture_dir() / "spool" / "dead"


def state_dir() -> Path:
    """Per-session upload progress: how many bytes of the transcript went into parts, the next part."""
    return capture_dir() / "state"


def lock_path() -> Path:
    return capture_dir() / "worker.lock"


def log_path() -> Path:
    return capture_dir() / "worker.log"

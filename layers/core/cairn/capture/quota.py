"""Over quota (HTTP 429): one wording for the CLI, `cairn doctor` and the hooks, and the hooks' own log.

A team over its request quota (or throttled) gets 429 with `Retry-After` from API Gateway. The context
hooks must stay silent to the agent (they fail open), so they write what happened to `hooks.log` in the
Cairn home instead, and `cairn doctor` reads it back. Standard library only: the hooks import this on
the agent's critical path.
"""

from __future__ import annotations

import calendar
import contextlib
import time
from email.utils import parsedate_to_datetime
from pathlib import Path

from cairn.userdirs import cairn_home

MAX_LOG_BYTES = 256 * 1024
OVER_QUOTA = "over quota"


def retry_after_seconds(header: str | None, now: float | None = None) -> int | None:
    """`Retry-After` as whole seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not header:
        return None
    value = header.strip()
    if value.isdigit():
        return int(value)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0, round(when - (time.time() if now is None else now)))


def over_quota_line(retry_after: int | None) -> str:
    if retry_after is None:
        return f"{OVER_QUOTA}, retry later"
    return f"{OVER_QUOTA}, retry after {retry_after} s"


def hook_log_path() -> Path:
    return cairn_home() / "hooks.log"


def log_hook_event(event: str, line: str) -> None:
    """One line in the hooks' log; never raises (the hook must not fail for its own bookkeeping)."""
    with contextlib.suppress(OSError):
        path = hook_log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            path.write_text("")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with path.open("a", encoding="utf-8") as log:
            log.write(f"{stamp} {event}: {line}\n")


def last_over_quota(max_age_s: float = 86_400, now: float | None = None) -> str | None:
    """The hooks' latest over-quota line of the last `max_age_s`, or None."""
    try:
        lines = hook_log_path().read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    now = time.time() if now is None else now
    for line in reversed(lines):
        if OVER_QUOTA not in line:
            continue
        try:
            at = calendar.timegm(time.strptime(line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            continue
        return line if now - at <= max_age_s else None
    return None

"""The server log's line per learned session, for the runner to log when a session is learned:

    learned <session> (<agent>, <project>): +N ~M -S

+N memories created, ~M merged into existing ones, -S superseded (only shown when any were).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cairn.domain.models import Session


def learned_line(session: Session) -> str:
    made: Mapping[str, Any] = (session.stats or {}).get("consolidate") or {}
    created, merged, superseded = (int(made.get(k) or 0) for k in ("created", "merged", "superseded"))
    counts = f"+{created} ~{merged}" + (f" -{superseded}" if superseded else "")
    return f"learned {session.id} ({session.agent}, {session.project or 'no project'}): {counts}"

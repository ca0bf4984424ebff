"""Salience: how much a memory deserves a place in the session-start block, from its use and its age.

A pure function of the memory and the time, so the block, the digest and the tests agree on it without a
store. The dream pass (`cairn.pipeline.remembering.dream`) writes what it reads: `details.evidence`
(the sessions that said it), `details.demoted` (a procedure that stopped working) and `details.closed_by`
(an open item a later session finished); recall writes `access_count` and `last_accessed_at`.

Evidence from several sessions and frequent recall raise it; a memory nobody has used or restated for long
fades (`faded`), so it leaves the block. Nothing is deleted: a faded memory is still current and searchable.
"""

from __future__ import annotations

import math
from datetime import datetime

from cairn.domain.models import Memory

HALF_LIFE_DAYS = 30.0  # unused and unrestated for a month: half as salient
FADED_BELOW = 0.12  # ~3 half-lives for a memory seen once and never recalled
SESSIONS_FULL = 5  # said in this many sessions: full support
USES_FULL = 20  # recalled this often: full use
DEMOTED_FACTOR = 0.4


def _when(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def sessions_of(memory: Memory) -> int:
    """How many sessions evidence the memory (at least one: the one it was learned in)."""
    evidence = memory.details.get("evidence")
    if isinstance(evidence, dict) and isinstance(evidence.get("count"), int):
        return max(1, evidence["count"])
    return max(1, len(memory.details.get("sessions") or ()))


def last_used(memory: Memory) -> datetime:
    """The latest of: learned, last restated by a session, last recalled."""
    evidence = memory.details.get("evidence")
    seen = _when(evidence.get("last_seen")) if isinstance(evidence, dict) else None
    times = [t for t in (memory.created_at, seen, memory.last_accessed_at) if t is not None]
    aware = [t for t in times if t.tzinfo is not None] or times
    return max(aware)


def salience(memory: Memory, now: datetime) -> float:
    """0..1: 0 for what is no longer current (superseded, closed), 1 for a pinned memory; else the
    memory's confidence, support across sessions and recall use, faded by the time since it was last
    used or restated (half-life `HALF_LIFE_DAYS`)."""
    if not memory.is_current or memory.details.get("closed_by"):
        return 0.0
    if memory.pinned:
        return 1.0
    support = min(1.0, (sessions_of(memory) - 1) / (SESSIONS_FULL - 1))
    use = min(1.0, math.log1p(memory.access_count) / math.log1p(USES_FULL))
    base = 0.4 * memory.confidence + 0.35 * support + 0.25 * use
    if memory.details.get("demoted"):
        base *= DEMOTED_FACTOR
    last = last_used(memory)
    if (last.tzinfo is None) != (now.tzinfo is None):
        last = last.replace(tzinfo=now.tzinfo)
    days = max(0.0, (now - last).total_seconds() / 86_400)
    # support and use slow the fading: a convention five sessions kept lasts longer than a one-off
    half_life = HALF_LIFE_DAYS * (1 + support + use)
    return round(base * 0.5 ** (days / half_life), 4)


def faded(memory: Memory, now: datetime) -> bool:
    """Whether the memory has faded from the block (it stays current and searchable)."""
    return not memory.pinned and salience(memory, now) < FADED_BELOW

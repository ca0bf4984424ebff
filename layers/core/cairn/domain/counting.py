"""Overview counters kept on write: which counter a memory adds one to, and what a filter reads from them.

A team's overview must not scan the team. Each adapter keeps one counter per (project, scope, kind, owner
of a personal memory) of the team's current memories, changed in the same atomic write as the memory,
and `counts_from_counters` answers `MemoryRepository.counts` from them exactly as `MemoryFilter.admits`
would have over a scan.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from cairn.domain.models import Memory, MemoryCount, MemoryFilter, MemoryKind, Scope

CountKey = tuple[str | None, Scope, MemoryKind, str | None]


def count_key(m: Memory | None) -> CountKey | None:
    """The counter a memory adds one to; None for a superseded or closed one (or no memory at all)."""
    if m is None or not m.is_current:
        return None
    return (m.project, m.scope, m.kind, m.owner if m.scope is Scope.PERSONAL else None)


def count_deltas(before: Memory | None, after: Memory | None) -> dict[CountKey, int]:
    """What a write from `before` to `after` changes in the counters (nothing when its key stays)."""
    deltas: Counter[CountKey] = Counter()
    if (old := count_key(before)) is not None:
        deltas[old] -= 1
    if (new := count_key(after)) is not None:
        deltas[new] += 1
    return {k: n for k, n in deltas.items() if n}


def merge_deltas(*parts: dict[CountKey, int]) -> dict[CountKey, int]:
    total: Counter[CountKey] = Counter()
    for part in parts:
        total.update(part)
    return {k: n for k, n in total.items() if n}


def counters_answer(flt: MemoryFilter) -> bool:
    """Whether the counters can answer this filter: they hold current memories only, without tags or
    sessions, so a filter on those still counts over a listing."""
    return not flt.include_superseded and not flt.tags and not flt.session_id


def _admits(flt: MemoryFilter, key: CountKey) -> bool:
    """`MemoryFilter.admits` for every memory behind one counter (the clauses counters_answer leaves)."""
    project, scope, kind, owner = key
    if flt.kinds and kind not in flt.kinds:
        return False
    if flt.scopes and scope not in flt.scopes:
        return False
    if scope is Scope.PERSONAL and owner != flt.member:
        return False
    if flt.projects is not None and project is not None and project not in flt.projects:
        return False
    if flt.project is not None:
        return project == flt.project or (flt.include_team_scope and scope is Scope.TEAM)
    return True


def counts_from_counters(counters: Iterable[tuple[CountKey, int]], flt: MemoryFilter) -> list[MemoryCount]:
    tally: Counter[tuple[str | None, Scope, MemoryKind]] = Counter()
    for key, n in counters:
        if n > 0 and _admits(flt, key):
            tally[key[:3]] += n
    return [MemoryCount(p, sc, k, n) for (p, sc, k), n in tally.items()]

"""The "Unresolved errors" section: what failed and is not known to be fixed.

It admits memories tagged as errors whose outcome is not a resolution, and episodes that failed, unless
tagged resolved. The assembly passes only those of the last session that it did not go on past
(`project_block.worked_past`): what failed in an older session, the sessions after it went on from.
`RESOLVED_OUTCOMES` is the one list of outcomes that close an error; the digest reads it too.
"""

from __future__ import annotations

from collections.abc import Iterable

from cairn.domain.models import Memory
from cairn.domain.vocabulary import ERROR_TAGS, RESOLVED_TAGS
from cairn.services.context.lines import UNRANKED, Line, Rank, line, newest_first

ERRORS_TITLE = "Unresolved errors"
RESOLVED_OUTCOMES = frozenset({"fixed", "resolved", "succeeded", "success"})
FAILED_OUTCOMES = frozenset({"failure", "failed", "fail", "error", "errored"})


def error_lines(fetched: list[Memory], episodes: list[Memory], project: str, rank: Rank) -> list[Line]:
    """Memories tagged error/unresolved and failed episodes, unless tagged resolved.

    Tagged errors are looked for among the newest memories of each kind that the other sections fetch,
    not by a tag query: the SQLite repository answers a tag filter by parsing every row of the team
    (~130 ms at 10k memories), which alone would blow the session-start latency budget.
    """
    # an error a later success fixed is history (its fix is a procedure), not an unresolved error
    tagged = [
        m
        for m in fetched
        if ERROR_TAGS.intersection(m.tags)
        and str(m.details.get("outcome", "")).strip().lower() not in RESOLVED_OUTCOMES
    ]
    failed = [m for m in episodes if str(m.details.get("outcome", "")).strip().lower() in FAILED_OUTCOMES]
    found = [m for m in _unique(tagged + failed) if not RESOLVED_TAGS.intersection(m.tags)]
    newest = newest_first(found)
    found.sort(key=lambda m: (*rank.get(m.id, UNRANKED), -m.pinned, *newest(m)))
    return [line(m, project) for m in found]


def _unique(memories: Iterable[Memory]) -> list[Memory]:
    seen: dict[str, Memory] = {}
    for m in memories:
        seen.setdefault(m.id, m)
    return list(seen.values())

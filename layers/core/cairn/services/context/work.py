"""The "Recent work" section: what recent sessions did and left open.

It admits episodes (git activity, unfinished todos) that did not fail (a failed one is an unresolved
error). What is still open comes first: where the last session left off, then older work. A compaction
summary's pending work is never among them (`trust.unasked`), nor an older session's git status with
nothing it did to git (`status_only`): the checkout has moved on since.
"""

from __future__ import annotations

from collections.abc import Collection

from cairn.domain.models import Memory
from cairn.domain.vocabulary import ERROR_TAGS, Tag
from cairn.services.context.errors import FAILED_OUTCOMES
from cairn.services.context.layout import ONE_SESSION, Layout
from cairn.services.context.lines import UNRANKED, Line, Rank, line, newest_first


def work_lines(
    episodes: list[Memory],
    project: str,
    rank: Rank,
    last: str | None = None,
    layout: Layout = ONE_SESSION,
    side: Collection[str] = (),
) -> list[Line]:
    """What recent sessions did and left open (git activity, unfinished todos), newest first; failed
    episodes are shown as errors instead."""
    found = [
        m
        for m in episodes
        if str(m.details.get("outcome", "")).strip().lower() not in FAILED_OUTCOMES
        and not ERROR_TAGS.intersection(m.tags)
        # an older session's git status at its end is no longer the checkout's: the sessions after it
        # changed it, and the handoff says the last one's
        and not (m.details.get("status_only") and m.provenance.session_id != last)
    ]

    def left_on_a_branch(m: Memory) -> bool:
        """Work an older session committed to a branch the project did not take up: still open."""
        return Tag.GIT in m.tags and m.provenance.session_id in side

    # what is still open first
    newest = newest_first(found)
    found.sort(
        key=lambda m: (
            -m.pinned,
            *rank.get(m.id, UNRANKED),
            # where the last session left off, then older work
            m.provenance.session_id != last and not left_on_a_branch(m),
            Tag.OPEN not in m.tags and not left_on_a_branch(m),
            layout.account_first and Tag.GIT in m.tags,
            *newest(m),
        )
    )
    return [line(m, project, limit=layout.work_chars) for m in found]

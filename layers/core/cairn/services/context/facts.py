"""The "Project facts" section: what the sessions established (ports, paths, versions, where things
live, values the agent reported setting).

It admits facts that are not errors (those are "Unresolved errors") and not team-wide (those are "Team
insights"); a compaction summary's sections are never among them (`trust.unasked`). One session's facts
go pinned, relevant and surest first. A project of many sessions
has more values than room: `project_block.fact_weights` orders them (what the project changed, what
other sessions name too, what its latest sessions set), and each setting is said once.
"""

from __future__ import annotations

from cairn.domain.models import Memory, Scope
from cairn.domain.vocabulary import ERROR_TAGS
from cairn.services.context.lines import UNRANKED, Line, Rank, line, newest_first
from cairn.services.project_block import fact_values, fact_weights, said_before

FACT_CHARS = 240  # a fact is one statement; a longer one is cut, its id fetches the rest
FACTS_FETCHED = 300  # a project of many sessions reports many values; the weights choose among them


def fact_lines(
    found: list[Memory], project: str, rank: Rank, ages: dict[str, int] | None = None
) -> list[Line]:
    """Facts the sessions established (ports, paths, versions, where things live, values the agent
    reported setting), pinned and relevant first, then by `project_block.fact_weights`: what the
    project changed, what other sessions name too, what its latest sessions set. Errors and team-wide
    facts are shown in their own sections."""
    found = [m for m in found if not ERROR_TAGS.intersection(m.tags) and m.scope is not Scope.TEAM]
    if ages is None:  # one session: what it established, pinned, relevant and surest first
        newest = newest_first(found)
        found.sort(key=lambda m: (-m.pinned, *rank.get(m.id, UNRANKED), -round(m.confidence, 1), *newest(m)))
        return [line(m, project) for m in found]
    weight = fact_weights(found, ages)
    newest = newest_first(found)
    found.sort(key=lambda m: (-m.pinned, rank.get(m.id, UNRANKED)[0], -weight[m.id], *newest(m)))
    # a setting is said once: a fact whose every setting a weightier one shows adds nothing to it
    shown: set[str] = set()
    out = []
    for m in found:
        settings = fact_values(m)
        if said_before(settings, shown) and not m.pinned:
            continue
        shown |= settings
        out.append(line(m, project, limit=FACT_CHARS))
    return out

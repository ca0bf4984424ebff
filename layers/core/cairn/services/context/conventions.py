"""The "Preferences and conventions" section: how this team and project want things done.

It admits every preference and pattern the assembly fetched (in a project of many sessions, less a
person's rule a fact already states in full: `project_block.restated_by_rule`). Like the handoff, the
section has no share of the budget (`layout.SHARES`), only its cap of lines. Pinned and relevant first,
this project's own before the team's, surest first, then newest.
"""

from __future__ import annotations

from cairn.domain.models import Memory, Scope
from cairn.services.context.lines import UNRANKED, Line, Rank, line, newest_first


def convention_lines(found: list[Memory], project: str, rank: Rank) -> list[Line]:
    newest = newest_first(found)
    found = sorted(
        found,
        key=lambda m: (
            -m.pinned,
            *rank.get(m.id, UNRANKED),
            m.scope is Scope.TEAM,  # this project's own conventions before the team's
            -round(m.confidence, 1),
            *newest(m),
        ),
    )
    return [line(m, project) for m in found]

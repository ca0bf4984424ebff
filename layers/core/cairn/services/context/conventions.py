"""The "Preferences and conventions" section: how this team and project want things done.

It admits every preference and pattern the assembly fetched (in a project of many sessions, less a
person's rule a fact already states in full: `project_block.restated_by_rule`). Like the handoff, the
section has no share of the budget (`layout.SHARES`), only its cap of lines. Pinned and relevant first,
this project's own before the team's, surest first, then newest. A rule said in passing inside a longer
request shows the clauses that state it (`details.rule`).
"""

from __future__ import annotations

from dataclasses import replace

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
    return [_line(m, project) for m in found]


def _line(m: Memory, project: str) -> Line:
    """A rule the person stated in passing inside a longer request is told by its own clauses
    (`details.rule`, read by the pipeline): the request around it was that day's task, one `get` away."""
    rule = m.details.get("rule")
    if isinstance(rule, str) and rule.strip():
        return line(replace(m, content=rule, title=None), project, more=True)
    return line(m, project)

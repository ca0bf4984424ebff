"""The "Recent decisions" section: what was decided, with why where the decision says it.

It admits the newest decisions the assembly fetched, pinned and relevant first, then newest; each line
ends with its rationale, cut at 200 characters (a cut rationale shows the id, which fetches the rest).
What the person answered the agent's question (`Tag.ANSWER`: "which execution mode for this feature?")
decides the task it was asked in: it is shown for a prompt it bears on, and otherwise left to recall.
"""

from __future__ import annotations

from cairn.domain.models import Memory
from cairn.domain.vocabulary import Tag
from cairn.services.context.lines import UNRANKED, Line, Rank, clip, line, newest_first


def decision_lines(found: list[Memory], project: str, rank: Rank) -> list[Line]:
    newest = newest_first(found)
    found = sorted(found, key=lambda m: (-m.pinned, *rank.get(m.id, UNRANKED), *newest(m)))
    out = []
    for m in found:
        if Tag.ANSWER in m.tags and rank.get(m.id, UNRANKED)[0] >= UNRANKED[0]:
            continue  # no prompt it bears on
        why, cut = clip(str(m.details.get("rationale") or ""), 200)
        out.append(line(m, project, suffix=f" Why: {why}" if why else "", more=cut))
    return out

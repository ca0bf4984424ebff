"""The "Team insights" section: what the team learned that holds beyond this project.

It admits team-scoped memories other than handoffs, reflections and episodes. With a prompt and
recall, those recall finds for the prompt, in its order; otherwise pinned, surest, then newest first.
Its lines name no scope: the whole section is the team's.
"""

from __future__ import annotations

from typing import Any

from cairn.domain.models import MemoryFilter, MemoryKind, Principal, Scope
from cairn.domain.ports import MemoryRepository
from cairn.services.context.lines import Line, line, newest_first, trusted


def team_lines(
    memories: MemoryRepository, recall: Any | None, caller: Principal, prompt: str | None
) -> list[Line]:
    flt = caller.confine(MemoryFilter(scopes=frozenset({Scope.TEAM})))
    skip = (MemoryKind.HANDOFF, MemoryKind.REFLECTION, MemoryKind.EPISODE)
    if prompt and recall is not None:
        found = trusted(h.memory for h in recall.recall(caller, prompt, flt, limit=20).hits)
    else:
        found = trusted(memories.list(caller.team_id, flt, limit=50).items)
        newest = newest_first(found)
        found.sort(key=lambda m: (-m.pinned, -round(m.confidence, 1), *newest(m)))
    return [line(m, None) for m in found if m.kind not in skip]

"""How the block spends its budget: the layout of one session's block, and of a project of many.

The assembly picks `ONE_SESSION` when every memory it fetched comes from one session, `PROJECT_LIFE`
otherwise. Every section reads its share of the budget from it; recent work, facts and the handoff
their caps and lengths too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.services.context.lines import ITEM_CHARS

# the most of the budget a section may take (preferences and the handoff: no limit); caps, not
# reservations, so a project with only decisions still gets a full block of them
SHARES = {"errors": 0.3, "work": 0.25, "procedures": 0.4, "decisions": 0.25, "facts": 0.2, "team": 0.15}


@dataclass(frozen=True, slots=True)
class Layout:
    """How the block spends its budget. One session's block tells its story: what it reported along the
    way, its accounts of work at length. A project of many sessions has more to tell than its last
    session: the values its sessions set (a larger, weighted facts section), with the last session's
    story kept short."""

    work_cap: int = 4
    work_chars: int = ITEM_CHARS
    reported: int = 8  # of the handoff's "Reported along the way", the latest
    asked_before: int = 3  # of the requests that led up to the last one, the nearest
    # a session's own account of how its work ended before its git log (what the commits say is the
    # project's history; where a project of many sessions left off is what the next one needs)
    account_first: bool = False
    reported_chars: int = 200
    facts_cap: int = 8
    conventions_cap: int = 15
    # the person's obligations (`Tag.OBLIGATION`): in one session's story they are mostly what its task
    # required, told by its requests; a project of many sessions keeps its person's standing rules
    obligations: bool = False
    shares: dict[str, float] = field(default_factory=lambda: dict(SHARES))
    weighted_facts: bool = False  # `project_block.fact_weights` orders the facts, each setting said once


ONE_SESSION = Layout()
PROJECT_LIFE = Layout(
    work_cap=2,
    work_chars=300,
    reported=3,
    reported_chars=140,
    asked_before=2,
    account_first=True,
    facts_cap=30,
    conventions_cap=8,  # its person states many rules: a cap keeps the facts' room
    obligations=True,
    shares=SHARES | {"work": 0.2, "procedures": 0.3, "facts": 0.5},
    weighted_facts=True,
)

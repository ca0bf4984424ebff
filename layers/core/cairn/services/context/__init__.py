"""Session-start context: what a new agent session should know, within a token budget.

`assemble` gathers, in priority order, the pending handoff ("where you left off"), unresolved errors,
preferences and conventions, proven procedures, recent decisions and team-global insights; drops
duplicates; renders one markdown line per memory with its id (so the agent can fetch the details); and
cuts by a real token count (`cairn.services.tokens`) so the block never exceeds the budget, whatever
the store holds. Sections have caps so the first ones cannot starve the rest.

A handoff is single-use per project and agent: delivering it closes its validity, so the next session
does not see it again, while a handoff addressed to another agent stays pending for that agent.
Delivery is a conditional write (`put_if_undelivered`): of two sessions starting at once, one gets it.

The block is wrapped in the markers the transcript parser cuts out (so Cairn never learns its own
output back) and says that recalled memory is data, not instructions.

The modules, each readable on its own:

- `service`: `ContextService`, which fetches, ranks, lays out and renders the block (and the prompt
  hook's answer, `relevant`); the budgets and limits callers check against;
- `budget`: cutting the sections to the budget (caps, shares, the token count's guarantee);
- `layout`: how the block spends its budget, for one session or a project of many;
- `lines`: one memory as one line, and the helpers every section shares;
- a module per section, each with the rule of what it admits: `handoff` ("Where you left off", and what
  the other sections do not repeat of it), `errors`, `work`, `conventions`, `procedures`, `decisions`,
  `facts`, `team`.
"""

from cairn.services.context.errors import RESOLVED_OUTCOMES
from cairn.services.context.service import (
    CAIRN_CONTEXT_CLOSE,
    CAIRN_CONTEXT_OPEN,
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MAX_PROMPT_CHARS,
    MIN_BUDGET,
    PROMPT_BUDGET,
    PROMPT_LIMIT,
    AssembledContext,
    ContextService,
)

__all__ = [
    "CAIRN_CONTEXT_CLOSE",
    "CAIRN_CONTEXT_OPEN",
    "DEFAULT_BUDGET",
    "MAX_BUDGET",
    "MAX_PROMPT_CHARS",
    "MIN_BUDGET",
    "PROMPT_BUDGET",
    "PROMPT_LIMIT",
    "RESOLVED_OUTCOMES",
    "AssembledContext",
    "ContextService",
]

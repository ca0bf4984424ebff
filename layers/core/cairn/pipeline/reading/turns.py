"""A session's turns: each request of its user and what followed it, up to the next request.

The reply that closed a turn is the agent's own account of it (what it found, what it did, what it
answered). A turn whose last words were followed by more tool calls was cut short (the user spoke
again, the transcript ends): those words narrate work in progress, they report nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.pipeline.models import EventDoc
from cairn.transcripts.model import Role

# a text made only of redaction placeholders says nothing
PLACEHOLDER = re.compile(r"^(?:\s*\[REDACTED[_:][^\]]*\]\s*)+$")


def is_request(e: EventDoc) -> bool:
    """A request of the session's user (not a sub-agent's prompt, not a redacted paste, not their words
    within the request under way: `EventDoc.steers`)."""
    text = e.text.strip()
    return (
        e.role is Role.USER
        and not e.is_sidechain
        and not e.steers
        and bool(text)
        and not PLACEHOLDER.match(text)
    )


@dataclass(frozen=True, slots=True)
class Turn:
    request: EventDoc
    events: tuple[EventDoc, ...]  # what followed the request, up to the next one

    @property
    def ran_tools(self) -> bool:
        return any(e.role is Role.TOOL_CALL for e in self.events)

    @property
    def closing_reply(self) -> EventDoc | None:
        """The agent's last reply of the turn, when nothing was run after it."""
        replies = [i for i, e in enumerate(self.events) if e.role is Role.ASSISTANT and e.text.strip()]
        if not replies or any(e.role is Role.TOOL_CALL for e in self.events[replies[-1] :]):
            return None
        return self.events[replies[-1]]


def turns(events: Sequence[EventDoc]) -> list[Turn]:
    """The main session's turns in order (a sub-agent's events belong to no turn of its own)."""
    main = [e for e in events if not e.is_sidechain]
    starts = [i for i, e in enumerate(main) if is_request(e)]
    ends = [*starts[1:], len(main)][: len(starts)]  # a session with no request has no turn
    return [Turn(main[s], tuple(main[s + 1 : end])) for s, end in zip(starts, ends, strict=True)]

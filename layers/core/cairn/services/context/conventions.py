"""The "Preferences and conventions" section: how this team and project want things done.

It admits every preference and pattern the assembly fetched (in a project of many sessions, less a
person's rule a fact already states in full: `project_block.restated_by_rule`), each rule once: one
another rule says in full, from its first words, is left to it (`said_by_another`). Like the handoff, the
section has no share of the budget (`layout.SHARES`), only its cap of lines. Pinned and relevant first,
this project's own before the team's, surest first, then newest.
"""

from __future__ import annotations

from collections.abc import Iterable

from cairn.domain.models import Memory, Scope
from cairn.services.context.lines import UNRANKED, WORD, Line, Rank, line, newest_first


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
    words = {m.id: _words(m.content) for m in found}  # read once: the block is assembled per prompt
    return [line(m, project) for m in found if not said_by_another(words[m.id], words.values())]


MIN_RESTATED_WORDS = 4  # fewer words ("Use tabs") name a topic more than they state a rule


def said_by_another(own: list[str], others: Iterable[list[str]]) -> bool:
    """Whether another rule (by its `_words`) says all this one says and more, in the same words and from
    the same start ("Do not add the full names" beside "Do not add the full name of the agent as well"):
    the person restated a rule in passing; the block shows it once, in its fuller form. A rule that
    starts otherwise ("Add the full names" beside "Do not add …") is another rule, however many words it
    shares."""
    if len(own) < MIN_RESTATED_WORDS:
        return False
    said = set(own)
    return any(len(theirs) > len(own) and theirs[:2] == own[:2] and said <= set(theirs) for theirs in others)


def _words(text: str) -> list[str]:
    """A rule's words, lower case, a plural's `s` aside (`names`, `name`)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in WORD.findall(text.lower())]

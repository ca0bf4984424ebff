"""What a query asks about time: whether it asks for the present state of something.

"Is X still failing?", "which host do we deploy to now?", "what is the current endpoint?" ask what is
true today. In a project's memory the same subject is usually discussed in several sessions, the
earlier ones saying what was true then (pending, broken, the old value) and the later ones what
became of it. For such a question the newer session's account is the answer; recall reads this cue and
orders competing hits by session (`search.fusion.session_recency`).

The cue is a handful of adverbs and adjectives of the present, and the idioms that ask where a matter
stands, not the wording of any question set.
"""

from __future__ import annotations

import re

# Words that ask for the state of things today. "yet" and "anymore" ask whether something changed;
# "latest" and "current(ly)" name the present value; "still" and "now" compare it with before.
_PRESENT = re.compile(
    r"\b(?:still|now|currently|current|anymore|any more|yet|latest|nowadays|today)\b"
    # where a matter stands: "where do we stand on X?", "the status of X?", "where are we with X?"
    r"|\bwhere (?:do|does) \w+ stand\b|\bstatus of\b|\bwhere are we (?:with|on)\b",
    re.I,
)


def asks_present_state(query: str) -> bool:
    """True when the query asks what is true now (rather than what happened once)."""
    return bool(_PRESENT.search(query or ""))

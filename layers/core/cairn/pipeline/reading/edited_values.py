"""The values a session's edits took out of the project's files: a number with its unit, an address, a
URL that an edit's old text had and that no edit of the session put back.

A fact says how the project's files were when it was said ("a city search uses a 15-25km radius"). When a
later session's edit replaces `City: 15-25km` with `City: 50km`, the fact is no longer current, whatever
that session said about it in words. This is read off the edits' own text (a replacement's old and new
strings, a patch's `-` and `+` lines), so every stack and agent gives it. Only values count: a word or an
identifier is renamed, moved and kept in too many ways to tell. Within one session the same holds from
the edit on: what the agent reported before an edit took its value out (`taken_out_after`) is no outcome
of the session, neither in its handoff nor as a fact. `stated_values` reads which values a statement gives
as current, not those it says a thing was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import replaced, succeeded_edits

MAX_VALUES = 100
_URL = re.compile(r"https?://[^\s)>\]'\"`,;\\]+")  # a backslash ends it: `\n` in a quoted string
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
_UNIT = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)?(?:\s?[-–]\s?\d+(?:[.,]\d+)?)?\s?(?:[kmg]b|km|ms|min|px|%|rpm)(?![\w])", re.I
)


def value_tokens(text: str) -> set[str]:
    """The values a text names, each as every spelling of it reads (`15–25 km` is `15-25km`)."""
    found = [m.group(0) for rule in (_URL, _IP, _UNIT) for m in rule.finditer(text)]
    return {_plain(v) for v in found}


# what a statement says a thing was, not is: "(was 5-10km)", "from 1.5km to", "Before: …", "instead of 2s"
_FORMER = re.compile(
    r"\((?:was|previously|formerly|before|old)\b[^)]*\)|\bfrom\s+\S+(?:\s\S+)?(?=\s+(?:to|→|->)\s)"
    r"|\bbefore:[^;\n]*|\b(?:instead of|rather than|replacing|replaced)\s+\S+|\b(?:was|were)\s+\S+",
    re.I,
)


def stated_values(text: str) -> set[str]:
    """The values (numbers with units, addresses, URLs) a statement gives as what is now, each as
    `edited_values.value_tokens` spells it: not those it says a thing was."""
    return value_tokens(_FORMER.sub(" ", text))


def _plain(value: str) -> str:
    return "".join(value.lower().replace("–", "-").split()).rstrip(".:/")


def edited_out(events: Sequence[EventDoc]) -> tuple[str, ...]:
    """The values the session's successful edits took out of the files and none of them put back."""
    removed: set[str] = set()
    kept: set[str] = set()
    for e in succeeded_edits(events):
        old, new = replaced(e)
        after = value_tokens(new)
        removed |= value_tokens(old) - after
        kept |= after
    return tuple(sorted(removed - kept))[:MAX_VALUES]


def taken_out_after(events: Sequence[EventDoc]) -> Callable[[int], frozenset[str]]:
    """For a point of the session (an event's `seq`), the values its successful edits after that point
    took out of the files and none of them put back: what the session said before such an edit
    ("the Terms link points to `https://x.app/terms`") its own work made untrue."""
    edits = [(e.seq, *(value_tokens(t) for t in replaced(e))) for e in succeeded_edits(events)]

    def after(seq: int) -> frozenset[str]:
        removed: set[str] = set()
        kept: set[str] = set()
        for at, old, new in edits:
            if at > seq:
                removed |= old - new
                kept |= new
        return frozenset(removed - kept)

    return after

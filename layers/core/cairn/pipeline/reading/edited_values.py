"""The values a session's edits took out of the project's files: a number with its unit, an address, a
URL that an edit's old text had and that no edit of the session put back.

A fact says how the project's files were when it was said ("a city search uses a 15-25km radius"). When a
later session's edit replaces `City: 15-25km` with `City: 50km`, the fact is no longer current, whatever
that session said about it in words. This is read off the edits' own text (a replacement's old and new
strings, a patch's `-` and `+` lines), so every stack and agent gives it. Only values count: a word or an
identifier is renamed, moved and kept in too many ways to tell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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

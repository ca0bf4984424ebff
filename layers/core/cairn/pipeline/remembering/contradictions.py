"""Which stance a decision or preference takes on which subject, to find a later one that reverses it.

"Use X", "let's go with X", "switch to X" are for X; "don't use X", "avoid X", "switch from X to Y",
"X instead of ..." (for the thing replaced) are against it. Two memories contradict when one is for a
subject the other is against. Deliberately narrow: a missed contradiction leaves two memories side by
side, a false one would hide a correct memory.
"""

from __future__ import annotations

import re

_SUBJECT = r"(?:the\s+|a\s+|an\s+)?(?P<{name}>[A-Za-z0-9][\w.+#@/-]*)"
_AGAINST = [
    re.compile(p.format(s=_SUBJECT.format(name="s")), re.I)
    for p in (
        r"\b(?:don'?t|do not|never|stop|no longer|shouldn'?t|should not)\s+"
        r"(?:use|using|run|running|pick|choose)\s+{s}",
        r"\bavoid(?:ing)?\s+{s}",
        r"\bswitch(?:ing|ed)?\s+(?:away\s+)?from\s+{s}",
        r"\bmov(?:e|ing|ed)\s+away\s+from\s+{s}",
        r"\binstead of\s+{s}",
        r"\brather than\s+{s}",
        r"\breplac(?:e|ing|ed)\s+{s}\s+with\b",
        r"\bdrop(?:ping|ped)?\s+{s}",
        r"\bget rid of\s+{s}",
    )
]
_FOR = [
    re.compile(p.format(s=_SUBJECT.format(name="s")), re.I)
    for p in (
        r"(?<!n't )(?<!not )(?<!never )\b(?:use|using)\s+{s}",
        r"\bgo(?:ing)?\s+with\s+{s}",
        r"\bswitch(?:ing|ed)?\s+(?:from\s+\S+(?:\s+\S+){{0,3}}?\s+)?to\s+{s}",
        r"\bstick(?:ing)?\s+with\s+{s}",
        r"\bprefer\s+{s}",
        r"\badopt(?:ing)?\s+{s}",
        r"\bmov(?:e|ing)\s+to\s+{s}",
        r"\breplac(?:e|ing|ed)\s+\S+\s+with\s+{s}",
    )
]
_NOT_SUBJECTS = frozenset({"it", "this", "that", "them", "one", "something", "anything", "to", "the", "a"})


def _norm(subject: str) -> str:
    return subject.lower().rstrip(".,;:!?'\"`)")


def stances(text: str) -> set[tuple[str, str]]:
    """{("+", subject), ("-", subject)} for every subject the text is for or against."""
    against = {_norm(m.group("s")) for p in _AGAINST for m in p.finditer(text)}
    out = {("-", s) for s in against if s not in _NOT_SUBJECTS}
    for p in _FOR:
        for m in p.finditer(text):
            s = _norm(m.group("s"))
            if s not in _NOT_SUBJECTS and s not in against:
                out.add(("+", s))
    return out


def contradicts(later: str, earlier: str) -> bool:
    """Whether the later text reverses the earlier one on a shared subject."""
    new, old = stances(later), stances(earlier)
    return any(("-" if sign == "+" else "+", subject) in new for sign, subject in old)

"""General English as a vocabulary: which words of a query name something specific, and which merely misspell.

English as written on the web, in books, subtitles and forums (wordfreq's large English list: every word
seen at least about once per hundred million) holds the everyday words and the common terms of art alike
(`workaround`, `toolchain`, `namespace`). A lowercase word it has never seen, nor any plain inflection of one
(`autovacuum`, `kubectl`, `pgbouncer`, `dependabot`), is the name of a specific thing as much as a
capitalised one is: a question about it in a store that never mentions it was never discussed. Nothing here
is fitted to a project or a stack; the list is wordfreq's, cut to words of MIN_LETTERS or more
(`data/NOTICE.md`). The bert vocabulary the embedder reads with was too small for this: it lacks
`workaround`, `toolchain` and `invoke`, and treating those as names cost answerable questions.

People type fast, so a rare-looking word may be a slip: one edit from an English word (`educaton`,
`sepctrum`) it is no name, and `misspells` says whether it is within a few edits of a word the store holds
(`refenecs`).
"""

from __future__ import annotations

import gzip
import re
from functools import cache, lru_cache
from pathlib import Path

_WORDS = Path(__file__).with_name("data") / "english_words.txt.gz"
MIN_LETTERS = 6  # shorter words are too often abbreviations or slang to call them names
_SUFFIXES = ("'s", "s", "es", "ed", "d", "ing", "ly", "er", "ers", "ness", "ment", "ments", "able")
_PREFIXES = ("un", "re", "non", "pre", "mis", "over", "under", "sub", "co")
_WORD = re.compile(r"(?<![\w./\\-])[A-Za-z]+(?:'s)?(?![\w/\\-])")


def load() -> None:
    """Read the word list now (~70 ms), ahead of the first question that needs it."""
    _common()


@cache
def _common() -> frozenset[str]:
    with gzip.open(_WORDS, "rt", encoding="utf-8") as words:  # ~70 ms, once per process
        return frozenset(words.read().split())


def is_common(word: str) -> bool:
    """True for a word of general English: in the list whole, or a plain inflection (`retried`,
    `deploying`) or prefixed form (`unmerged`) of a word of MIN_LETTERS or more that is."""
    common = _common()
    word = word.lower()
    stems = {word}
    for prefix in ("", *_PREFIXES):
        if prefix and not word.startswith(prefix):
            continue
        rest = word[len(prefix) :]
        stems.add(rest)
        for suffix in _SUFFIXES:
            if rest.endswith(suffix) and len(rest) - len(suffix) >= 3:
                bare = rest[: -len(suffix)]
                stems.update((bare, bare + "e", bare[:-1] if bare[-1:] == bare[-2:-1] else bare))
    return any(s in common for s in stems if len(s) >= MIN_LETTERS)


def uncommon_words(text: str) -> list[str]:
    """The words of `text` (letters only, MIN_LETTERS or more) that general English does not hold."""
    out: list[str] = []
    for match in _WORD.finditer(text or ""):
        word = match.group().removesuffix("'s")
        word = word.lower()
        if len(word) >= MIN_LETTERS and word not in out and _names_a_thing(word):
            out.append(word)
    return out


@lru_cache(maxsize=8192)  # a query is read whole and part by part, and prompts repeat their words
def _names_a_thing(word: str) -> bool:
    return not is_common(word) and not _slip(word)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _slip(word: str) -> bool:
    """True when one edit (a letter dropped, added, changed or two swapped) makes `word` an English word:
    "educaton", "torunament", "sepctrum" are slips, not names."""
    common = _common()
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    for left, right in cuts:
        if right and left + right[1:] in common:
            return True
        if len(right) > 1 and left + right[1] + right[0] + right[2:] in common:
            return True
        for c in _LETTERS:
            if left + c + right in common or (right and left + c + right[1:] in common):
                return True
    return False


def misspells(term: str, known: set[str]) -> bool:
    """True when `term` is within one edit (two, from eight letters) of a term in `known`: a slip of the
    keys, not a name (a transposition counts as one edit)."""
    limit = 1 if len(term) < 8 else 2
    return any(
        abs(len(k) - len(term)) <= limit and k[:1] == term[:1] and _edits(term, k, limit) <= limit
        for k in known
    )


def _edits(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance between `a` and `b`, stopping once it exceeds `limit`."""
    before: list[int] | None = None
    above = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(above[j] + 1, row[j - 1] + 1, above[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], before[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        before, above = above, row
    return above[-1]

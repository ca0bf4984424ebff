"""Query-biased snippets: the few lines of a long text that bear on a query, within a character budget.

Recall shows an agent ten results; whole transcript excerpts would cost thousands of tokens, so a long
text is shown as its best lines for this query (most distinct query terms, rarer terms weighing more),
in their original order, joined by "…". The full text stays one call away (the memory's id, or the
session's lines for an excerpt).
"""

from __future__ import annotations

import math

from cairn.search.analyzer import analyze, query_terms

LINE_CHARS = 260  # one shown line; a long line is cut around its first matching term


def snippet(text: str, query: str, budget: int = 420) -> str:
    """`text` itself when it fits in `budget`, else its most query-relevant lines within it."""
    text = text or ""
    if len(text) <= budget:
        return text
    terms = set(query_terms(query))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not terms or not lines:
        return _cut(text, budget)
    analysed = [set(analyze(ln)) for ln in lines]
    df = {t: sum(t in a for a in analysed) for t in terms}
    weight = {t: math.log(1 + len(lines) / df[t]) for t in terms if df[t]}
    scored = sorted(
        ((sum(weight.get(t, 0.0) for t in a & terms), -i) for i, a in enumerate(analysed)),
        reverse=True,
    )
    chosen: list[int] = []
    used = 0
    for score, neg_i in scored:
        if score <= 0:
            break
        i = -neg_i
        shown = _around(lines[i], terms, LINE_CHARS)
        if used + len(shown) + 2 > budget:
            continue
        chosen.append(i)
        used += len(shown) + 2
    if not chosen:
        return _cut(text, budget)
    parts = []
    previous = -2
    for i in sorted(chosen):
        if i != previous + 1 and parts:
            parts.append("…")
        parts.append(_around(lines[i], terms, LINE_CHARS))
        previous = i
    return "\n".join(parts)


def _around(line: str, terms: set[str], limit: int) -> str:
    """The line, or a window of it starting a little before the first word that matches a term."""
    if len(line) <= limit:
        return line
    start = 0
    for word_start, word in _word_positions(line):
        if set(analyze(word)) & terms:
            start = max(word_start - 40, 0)
            break
    window = line[start : start + limit - 2]
    return ("…" if start else "") + window + "…"


def _word_positions(line: str):
    position = 0
    for word in line.split():
        found = line.find(word, position)
        yield found, word
        position = found + len(word)


def _cut(text: str, budget: int) -> str:
    return text[: budget - 1].rstrip() + "…"

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
HEADING_SHARE = 0.6  # what a line inherits of its heading's match


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
    own = [sum(weight.get(t, 0.0) for t in a & terms) for a in analysed]
    scored = sorted(((s, -i) for i, s in enumerate(_with_context(lines, own))), reverse=True)
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
    chosen = _fill_gaps(chosen, lines, terms, budget - used)
    parts = []
    previous = -2
    for i in sorted(chosen):
        if i != previous + 1 and parts:
            parts.append("…")
        parts.append(_around(lines[i], terms, LINE_CHARS))
        previous = i
    return "\n".join(parts)


def _is_heading(line: str) -> bool:
    """A line that names what the lines under it are about: `## Out of scope`, `Manual test:`, `**Why**`."""
    return line.startswith(("#", "**")) or (line.endswith(":") and len(line) <= 80)


def _with_context(lines: list[str], own: list[float]) -> list[float]:
    """A line under a matching heading bears on the query through it: it inherits part of its score."""
    out = []
    heading = 0.0
    for line, score in zip(lines, own, strict=True):
        if _is_heading(line):
            heading = score
            out.append(score)
        else:
            out.append(score + HEADING_SHARE * heading)
    return out


def _fill_gaps(chosen: list[int], lines: list[str], terms: set[str], room: int) -> list[int]:
    """One line between two shown lines is shown too, when it fits: a list read with a hole in it
    misleads more than the line costs."""
    picked = set(chosen)
    for i in sorted(chosen):
        gap = i + 1
        if gap + 1 in picked and gap not in picked:
            shown = len(_around(lines[gap], terms, LINE_CHARS)) + 2
            if shown <= room:
                picked.add(gap)
                room -= shown
    return sorted(picked)


def _around(line: str, terms: set[str], limit: int) -> str:
    """The line, or the window of it that holds the most distinct query terms (a long edit or a
    one-line list has its answer anywhere), starting a little before the first of them."""
    if len(line) <= limit:
        return line
    hits = [(start, set(analyze(word)) & terms) for start, word in _word_positions(line)]
    hits = [(start, found) for start, found in hits if found]
    best, best_count = 0, 0
    for i, (start, _) in enumerate(hits):
        window = set().union(*(f for s, f in hits[i:] if s < start + limit - 40))
        if len(window) > best_count:
            best, best_count = max(start - 40, 0), len(window)
    window = line[best : best + limit - 2]
    return ("…" if best else "") + window + "…"


def _word_positions(line: str):
    position = 0
    for word in line.split():
        found = line.find(word, position)
        yield found, word
        position = found + len(word)


def _cut(text: str, budget: int) -> str:
    return text[: budget - 1].rstrip() + "…"

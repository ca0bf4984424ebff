"""Query-biased snippets: the passages of a long text that bear on a query, within a character budget.

Recall shows an agent ten results; whole transcript excerpts would cost thousands of tokens, so a long
text is shown as its best passages for this query (most distinct query terms, rarer terms weighing
more, and a term already shown weighing less each time), in their original order, joined by "…". A
passage is a line, or a piece of a long line: a one-line code edit, a pasted request or a wrapped
paragraph is read in sentence- or statement-sized pieces, so two answers in one long line can both be
shown and neither drags 200 characters of padding with it. The full text stays one call away (the
memory's id, or the session's lines for an excerpt). The hits of one answer are read as one text: a
passage a better hit already showed is not shown again (excerpts of one step overlap, and a memory
often restates a line its excerpt holds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from cairn.search.analyzer import analyze
from cairn.search.language import content_terms

LINE_CHARS = 260  # a line up to this long is one passage
PIECE_CHARS = 120  # a longer line is read in pieces of about this size
HEADING_SHARE = 0.6  # what a line inherits of its heading's match
COMMAND, OUTCOME = "$ ", "→"  # how a transcript excerpt renders a command and what it printed
# how a transcript excerpt starts a message (`pipeline.reading.steps.render_event`): a heading's reach
# ends at the next one
_MESSAGE = re.compile(r"(?:(?:sub-)?agent(?: thinking)?|user|task|summary|note): |\$ |edit ")
NEIGHBOUR_SHARE = 0.5  # what a piece of a long line inherits of the better piece beside it
# a passage shorter than this is shown again in a later hit: a fence, "→ ok" or a heading costs little
# and keeps the snippet readable
REPEAT_CHARS = 24
REPEAT_SHARE = 0.5  # what a query term is still worth per chosen passage that already shows it
# what a heading still lends per line already shown under it: a list under a matching heading is
# read on (0.5 cut a workflow's trigger list after two items), yet ten "README ✓" lines under "let
# me check each one:" do not crowd out the line with the count (1.0 cost a prompt-hook answer)
LENT_SHARE = 0.75
# Where a long line may be cut: after a sentence or statement, before a comment or a separator.
_BREAK = re.compile(r"(?<=[.;!?{}])\s+|\s+(?=//|/\*|#\s|[|→┃—]\s)")


@dataclass
class Shown:
    """The passages the snippets of one answer have shown so far, best hit first (normalised text)."""

    passages: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Passage:
    line: int  # index of its line
    piece: int  # its place in the line (0 for a whole line)
    last: bool  # the line's last piece
    text: str


def snippet(text: str, query: str, budget: int = 420, seen: Shown | None = None) -> str:
    """`text` itself when it fits in `budget`, else its most query-relevant passages within it.

    With `seen` (shared by the snippets of one answer, in rank order) the passages are chosen as
    without it; those an earlier snippet showed are then left out, and their room goes to the next
    best passages not shown yet ("…" when a hit has nothing new). A text shown whole stays whole.
    """
    text = text or ""
    if len(text) <= budget:
        if seen is not None:
            seen.passages.update(_key(p.text) for p in _all_passages(text) if _too_long_to_repeat(p.text))
        return text
    terms = set(content_terms(query))  # a question's own function words choose nothing (`language`)
    passages, words = _read(text)
    if not terms or not passages:
        return _cut(text, budget)
    analysed = [w & terms for w in words]
    df = {t: sum(t in a for a in analysed) for t in terms}
    weight = {t: math.log(1 + len(passages) / df[t]) for t in terms if df[t]}
    # what a heading or a command lends the lines under it is what it matches, however often its
    # own words are shown (the heading shown makes the lines it introduces no less the answer)
    lending = _context(passages, _with_neighbours(passages, [sum(weight[t] for t in a) for a in analysed]))
    chosen, used = _choose(passages, analysed, weight, lending, budget, [], set())
    if not chosen:
        return _cut(text, budget)
    picked = _fill_gaps(chosen, passages, budget - used)
    if seen is None:
        return _render(passages, picked)
    # chosen as if alone, then what the answer already shows is cut and the room it held goes to
    # the next best passages: a hit shows all it would alone that is new, and more
    repeated = {k for k, p in enumerate(passages) if _key(p.text) in seen.passages}
    fresh = [k for k in picked if k not in repeated]
    if len(fresh) < len(picked):
        more, used = _choose(passages, analysed, weight, lending, budget, fresh, set(picked) | repeated)
        fresh = _fill_gaps(sorted(more), passages, budget - used)
    seen.passages.update(_key(passages[k].text) for k in fresh if _too_long_to_repeat(passages[k].text))
    return _render(passages, fresh) if fresh else "…"


def _choose(
    passages: Sequence[_Passage],
    analysed: list[set[str]],
    weight: dict[str, float],
    lending: tuple[list[int], list[float]],
    budget: int,
    chosen: list[int],
    out: set[int],
) -> tuple[list[int], int]:
    """Passages best first while they fit in `budget`, after `chosen` (kept) and never one of `out`.
    `lending` is what each passage inherits through its context, and from which passage (`_context`):
    less by LENT_SHARE for each line already chosen under the same one."""
    chosen, out = list(chosen), set(out) | set(chosen)
    used = sum(len(passages[k].text) + 2 for k in chosen)
    shown: dict[str, int] = {}  # how many chosen passages match each term
    for k in chosen:
        for t in analysed[k]:
            shown[t] = shown.get(t, 0) + 1
    lender, lent = lending
    drawn: dict[int, int] = {}  # how many chosen passages inherit from each lender
    for k in chosen:
        if lender[k] >= 0:
            drawn[lender[k]] = drawn.get(lender[k], 0) + 1
    while True:
        # a term already shown counts less each time (diminishing returns): ten items of one list
        # that all match the same two words do not crowd out the line that answers the rest
        own = [sum(weight[t] * REPEAT_SHARE ** shown.get(t, 0) for t in a) for a in analysed]
        scores = [
            score + lent[k] * LENT_SHARE ** drawn.get(lender[k], 0)
            for k, score in enumerate(_with_neighbours(passages, own))
        ]
        best = max(
            (k for k in range(len(passages)) if k not in out and scores[k] > 0),
            key=lambda k: (scores[k], -k),
            default=None,
        )
        if best is None:
            break
        out.add(best)
        cost = len(passages[best].text) + 2
        if used + cost > budget:
            continue
        chosen.append(best)
        used += cost
        for t in analysed[best]:
            shown[t] = shown.get(t, 0) + 1
        if lender[best] >= 0:
            drawn[lender[best]] = drawn.get(lender[best], 0) + 1
    return chosen, used


@lru_cache(maxsize=256)
def _read(text: str) -> tuple[tuple[_Passage, ...], tuple[frozenset[str], ...]]:
    """A text's passages and each one's terms, immutable: the cache shares them. Cached: an answer
    that runs over its token budget shows the same hits again with less room, and a prompt and its
    recall read the same texts."""
    passages = tuple(_all_passages(text))
    return passages, tuple(frozenset(analyze(p.text)) for p in passages)


def _all_passages(text: str) -> list[_Passage]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return [p for i, line in enumerate(lines) for p in _passages(i, line)]


def _too_long_to_repeat(passage: str) -> bool:
    """Long enough that showing it twice costs more than it helps to read."""
    return len(passage) >= REPEAT_CHARS


def _key(passage: str) -> str:
    """A passage as compared across hits: case and spacing aside (excerpts render a line alike)."""
    return " ".join(passage.split()).lower()


def _passages(index: int, line: str) -> list[_Passage]:
    if len(line) <= LINE_CHARS:
        return [_Passage(index, 0, True, line)]
    pieces: list[str] = []
    for part in _BREAK.split(line):
        while len(part) > LINE_CHARS:  # no break inside: cut at a space near the piece size
            cut = part.rfind(" ", PIECE_CHARS // 2, PIECE_CHARS) + 1 or PIECE_CHARS
            pieces.append(part[:cut].rstrip())
            part = part[cut:].lstrip()
        if pieces and len(pieces[-1]) + len(part) < PIECE_CHARS:
            pieces[-1] += " " + part
        elif part:
            pieces.append(part)
    return [_Passage(index, n, n == len(pieces) - 1, p) for n, p in enumerate(pieces)]


def starts_message(line: str) -> bool:
    """Whether a line of a transcript excerpt starts a message: a person's, the agent's, a command."""
    return bool(_MESSAGE.match(line))


def _is_heading(line: str) -> bool:
    """A line that names what the lines under it are about: `## Out of scope`, `Manual test:`, `**Why**`."""
    return line.startswith(("#", "**")) or (line.endswith(":") and len(line) <= 80)


def _context(passages: Sequence[_Passage], scores: list[float]) -> tuple[list[int], list[float]]:
    """What each passage inherits through its context, and from which passage (-1: none). A line
    under a matching heading bears on the query through it, and so does the outcome line of a
    matching command (`$ git commit …` then `→ ok: …`). A heading right under a heading opens a part
    of what that one introduces ("slow because:" then "## The Problem"): its lines bear on the query
    through both. A heading reaches to the next message of a transcript excerpt (a command, a
    reply), no further."""
    lender, lent = [], []
    heading, command = (-1, 0.0), (-1, 0.0)
    under_heading = False  # the line before was a heading
    for k, (passage, score) in enumerate(zip(passages, scores, strict=True)):
        if passage.piece == 0 and passage.text.startswith(COMMAND):
            command = (k, score)
        if passage.piece == 0 and starts_message(passage.text):
            heading, under_heading = (-1, 0.0), False
        if passage.piece == 0 and passage.last and _is_heading(passage.text):
            heading = max((k, score), heading, key=lambda h: h[1]) if under_heading else (k, score)
            under_heading = True
            lender.append(-1)
            lent.append(0.0)
            continue
        under_heading = False
        source = heading
        if passage.piece == 0 and passage.text.startswith(OUTCOME) and command[1] > heading[1]:
            source = command
        lender.append(source[0] if source[1] > 0 else -1)
        lent.append(HEADING_SHARE * source[1])
    return lender, lent


def _with_neighbours(passages: Sequence[_Passage], own: list[float]) -> list[float]:
    """A piece of a long line is read with the pieces beside it: a list that follows "X is called
    by" answers a question about X though it names none of its words."""
    out = list(own)
    for k, passage in enumerate(passages):
        beside = [
            own[j] for j in (k - 1, k + 1) if 0 <= j < len(passages) and passages[j].line == passage.line
        ]
        if beside:
            out[k] += NEIGHBOUR_SHARE * max(beside)
    return out


def _fill_gaps(chosen: list[int], passages: Sequence[_Passage], room: int) -> list[int]:
    """One passage between two shown ones is shown too, when it fits: a list read with a hole in it
    misleads more than the passage costs."""
    picked = set(chosen)
    for k in sorted(chosen):
        gap = k + 1
        if gap + 1 in picked and gap not in picked and len(passages[gap].text) + 2 <= room:
            picked.add(gap)
            room -= len(passages[gap].text) + 2
    return sorted(picked)


def _render(passages: Sequence[_Passage], chosen: list[int]) -> str:
    """Passages in text order: pieces of one line run on, a skipped stretch shows as "…"."""
    out = ""
    previous: _Passage | None = None
    for k in chosen:
        p = passages[k]
        if previous is None:
            out = ("…" if p.piece else "") + p.text
        elif p.line == previous.line:
            out += (" " if p.piece == previous.piece + 1 else " … ") + p.text
        else:
            if not previous.last:
                out += "…"
            follows = p.line == previous.line + 1 and p.piece == 0
            out += ("\n" if follows else "\n…\n") + ("…" if p.piece else "") + p.text
        previous = p
    if previous is not None and not previous.last:
        out += "…"
    return out


def _cut(text: str, budget: int) -> str:
    return text[: budget - 1].rstrip() + "…"


LEFT_OUT_LINES = 3  # per answer hit: the lines of a tool's left-out text that bear on the query


def left_out_lines(left_out: str, query: str, budget: int = 420) -> str:
    """The lines of an excerpt's left-out tool prose (`Memory.tool_text`: blocks of a
    call line and the lines under it) that share a content word with `query`, each block's under its
    call line, at most LEFT_OUT_LINES within `budget` characters; "" when none bears on it."""
    terms = set(content_terms(query))
    if not terms or not left_out:
        return ""
    out: list[str] = []
    used = taken = 0
    for head, *lines in _blocks(left_out):
        headed = False
        for line in (ln for ln in lines if terms & set(analyze(ln))):
            above = 0 if headed else len(head) + 1
            if not taken and used + above + len(line) + 1 > budget:
                # the first line to show, longer than the room (a log's note to agents on one line):
                # the part of it around what the query names
                line = _around(line, terms, budget - used - above - 1)
            cost = len(line) + 1 + above
            if taken >= LEFT_OUT_LINES or used + cost > budget:
                break
            out.extend([line] if headed else [head, line])
            headed, used, taken = True, used + cost, taken + 1
    return "\n".join(out)


def _around(line: str, terms: set[str], room: int) -> str:
    """`line` cut to `room` characters around its first word that `terms` name, an ellipsis for each
    end cut off (its indentation kept: it is a line under its call line)."""
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    room -= len(indent) + 2  # the ellipses
    if room <= 0 or len(body) <= room:
        return line
    at = next((w.start() for w in re.finditer(r"\w+", body) if terms & set(analyze(w.group()))), 0)
    start = max(0, min(at - room // 3, len(body) - room))
    cut = body[start : start + room]
    return indent + ("…" if start else "") + cut + ("…" if start + room < len(body) else "")


def _blocks(left_out: str) -> list[list[str]]:
    """A left-out text's blocks: each a call line (not indented) and its output's lines under it."""
    blocks: list[list[str]] = []
    for line in left_out.splitlines():
        if not line.startswith(" ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks

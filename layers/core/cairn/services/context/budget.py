"""Cutting the block to its budget: which lines of which sections go in, by a real token count.

`fit` drops lines said twice across sections (same memory, same content), then fills the block greedily
in the sections' priority order, each section held to its cap of lines and its share of the budget, and
never past `MAX_CHARS`; a line whose words a line already in the block says, in the same order, is not
shown again (a fact that is one item of the closing report "Recent work" shows whole). It counts tokens
with the counter the service was given (`cairn.services.tokens`), redacts secrets again as the lines are
shown, and counts the whole block once more at the end: the block never exceeds the budget, whatever
the store holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.redaction import redact
from cairn.services.context.lines import WORD, Line, dedupe

MAX_CHARS = 9_000  # Claude Code turns hook output past ~10k characters into a preview
_REF = re.compile(r"\s*\[[\w-]+\]\s*$")  # the id a line cut short ends with
SAID_WORDS = 3  # a shorter line ("- Done.") says too little to be another's repetition


@dataclass(slots=True)
class Section:
    title: str
    cap: int
    lines: list[Line] = field(default_factory=list)
    share: float = 1.0  # of the budget this section may take, so one kind of memory cannot fill it


def fit(
    count: Callable[[list[str]], list[int]], header: str, footer: str, sections: list[Section], budget: int
) -> tuple[str, tuple[str, ...], int]:
    """Greedy in priority order: a line goes in when it and its section heading still fit. A
    first pass gives every section one line, a second holds each to its share of the budget (a
    share of what the sections with lines ask for together, when they ask for more than the
    whole), a third lets sections fill what the others left unused (a session with few kinds of
    memory still gets a full block, and no kind can crowd every other out)."""
    seen_ids: set[str] = set()
    seen_hashes: set[str] = set()
    for s in sections:
        s.lines = dedupe(s.lines, seen_ids, seen_hashes)[: s.cap * 2]
    headings = [f"\n## {s.title}\n" if s.title else "" for s in sections]
    fixed = iter(count([header, footer, *headings]))
    used = next(fixed) + next(fixed)
    chars = len(header) + len(footer)
    h_costs = list(fixed)
    costs: list[list[int]] = []
    for s in sections:
        # every word is at least one token: lines that cannot fit are not even tokenized
        fits = [ln for ln in s.lines if len(ln.text.split()) <= budget - used]
        counted = dict(zip(map(id, fits), count([ln.text for ln in fits]), strict=True))
        costs.append([counted.get(id(ln), budget + 1) for ln in s.lines])
    words = [[_words(ln.text) for ln in s.lines] for s in sections]
    said: list[str] = []  # the words of each line taken, as `_words` reads them
    taken: list[set[int]] = [set() for _ in sections]
    spent = [0] * len(sections)
    # shares are of what the sections that have lines ask for together: when they ask for more
    # than the budget, each gets its part of it, so the last section is not left the scraps
    asked = sum(s.share for s in sections if s.lines and s.share < 1.0)
    room = [s.share * budget / (1.0 if s.share >= 1.0 else max(asked, 1.0)) for s in sections]
    # first a line of every section, then each up to its share, then whatever room is left
    for one, capped in ((True, True), (False, True), (False, False)):
        for n, (s, heading) in enumerate(zip(sections, headings, strict=True)):
            before = len(taken[n])
            for k, (ln, cost) in enumerate(zip(s.lines, costs[n], strict=True)):
                if len(taken[n]) >= s.cap or (one and len(taken[n]) > before):
                    break
                if k in taken[n]:
                    continue
                extra = cost + (h_costs[n] if not taken[n] else 0)
                extra_chars = len(ln.text) + (len(heading) if not taken[n] else 0)
                if used + extra > budget or chars + extra_chars > MAX_CHARS:
                    continue
                # held to its share, and never a repetition of a line already in
                if (capped and spent[n] + extra > room[n]) or _said(words[n][k], said):
                    continue
                taken[n].add(k)
                said.append(words[n][k])
                spent[n] += extra
                used += extra
                chars += extra_chars
    # each piece of the block with the memory it shows (none for a heading)
    out: list[tuple[str, str | None]] = [(header, None)]
    for n, (s, heading) in enumerate(zip(sections, headings, strict=True)):
        if taken[n]:
            out.append((heading, None))
        out.extend((s.lines[k].text, s.lines[k].memory_id) for k in sorted(taken[n]))
    out.append((footer, None))
    # secrets are checked again as memory is shown, not only at ingest: a memory written before a
    # rule existed, or through the API, must not hand a credential to an agent (the count below
    # keeps the budget whatever the placeholders cost)
    out = [(redact(text).text if memory_id else text, memory_id) for text, memory_id in out]
    markdown = "".join(text for text, _ in out)
    # the sum of the parts is exact for whitespace-separated pieces; this is the guarantee
    while (total := count([markdown])[0]) > budget and len(out) > 2:
        out.pop(-2)
        markdown = "".join(text for text, _ in out)
    return markdown, tuple(m for _, m in out if m), total


def _words(text: str) -> str:
    """A line's words, lower case, each between spaces; a line cut short ("…", then its id) loses the
    word it was cut in."""
    text = _REF.sub("", text)
    cut = text.rstrip().endswith("…")
    found = WORD.findall(text.lower())
    return " " + " ".join(found[:-1] if cut else found) + " "


def _said(line: str, said: list[str]) -> bool:
    """Whether a line already taken says all of `line`'s words, in order."""
    return line.count(" ") > SAID_WORDS and any(line in other for other in said)

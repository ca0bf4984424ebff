"""The lines of the block: how one memory becomes one markdown line, and what every section shares.

A line is one memory, its content cut at `ITEM_CHARS` (a title only where it adds words the content does
not say), its scope and origin, and its id where `get` has more to give: on a line cut short. Nothing a
memory says can close the block (`inline` replaces the markers). The helpers here are the ones the
sections and the assembly have in common: the order each section falls back on (`newest_first`), what
may reach an agent unasked (`trusted`), the dedupe of lines across sections, and the prompt hook's lines
that show the passages bearing on the prompt (`bearing_line`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cairn.domain.models import Memory, Scope
from cairn.search.analyzer import STOP_WORDS
from cairn.search.snippets import snippet
from cairn.services.project_block import written_order
from cairn.services.trust import origin_tag, unasked

ITEM_CHARS = 500  # one long memory is cut; its id, shown then, fetches the rest
WS = re.compile(r"\s+")
WORD = re.compile(r"\w+")
TITLE_SLACK = 0.2  # a title is dropped when the content says all its words but one, or 80 % of them
_MARKER = re.compile(r"</?\s*cairn-context\s*>", re.I)
_TABLE_RULE = re.compile(r"^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$", re.M)  # a markdown table's |---|---|
_SHOWN_HOW = re.compile(r"\s+(?:\d?>&\d|\d?>\s*/dev/null)|\s+\|\s+(?:tail|head)\b.*$")

Rank = dict[str, tuple[int, float]]  # a memory's place by the prompt, then its salience negated
UNRANKED = (10**6, 0.0)


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    memory_id: str | None
    content_hash: str = ""


def trusted(memories: Iterable[Memory]) -> list[Memory]:
    """What may reach an agent unasked (`trust.unasked`): no text a tool supplied, or the agent's words
    passed on, that reads as instructions to an agent; a transcript excerpt keeps its other parts.
    Explicit recall still finds all of it, marked untrusted."""
    return [shown for m in memories if (shown := unasked(m)) is not None]


# --- rendering helpers ----------------------------------------------------------------------------
def inline(text: str, limit: int) -> str:
    """One line, no context markers (a memory must not close the block), cut at `limit` characters."""
    return clip(text, limit)[0]


def clip(text: str, limit: int) -> tuple[str, bool]:
    """`inline`'s line, and whether it was cut short."""
    text = _MARKER.sub("[cairn-context tag]", WS.sub(" ", _TABLE_RULE.sub("", text or ""))).strip()
    return (text, False) if len(text) <= limit else (text[: limit - 1].rstrip() + "…", True)


def ref(memory_id: str) -> str:
    return f" [{memory_id}]"


def line(
    m: Memory, project: str | None, suffix: str = "", limit: int = ITEM_CHARS, more: bool = False
) -> Line:
    """`more`: the suffix was cut short, so the memory has more to give than the line shows."""
    content, cut = clip(m.content, limit)
    title = ""
    if m.title and title_adds(m.title, content):
        shown_title, title_cut = clip(m.title, 80)
        title, cut = f"**{shown_title}**: ", cut or title_cut
    cut = cut or more
    where = ""
    if m.scope is Scope.PERSONAL:
        where = " (personal)"
    elif m.scope is Scope.TEAM and project is not None:
        where = " (team)"
    if m.pinned:
        where += " (pinned)"
    if tag := origin_tag(m):
        where += f" {tag}"
    # an id costs ~25 tokens: it is shown where `get` has more to give, on a line cut short
    text = f"- {title}{content}{suffix}{where}{ref(m.id) if cut else ''}\n"
    return Line(text, m.id, m.content_hash)


def bearing_line(m: Memory, project: str, prompt: str) -> Line:
    """A memory's line for one prompt: a long text shows its passages that bear on the prompt (a
    transcript excerpt's error, not its opening request), not its first 500 characters."""
    if not clip(m.content, ITEM_CHARS)[1]:
        return line(m, project)
    return line(replace(m, content=snippet(m.content, prompt, ITEM_CHARS)), project, more=True)


def newest_first(found: Sequence[Memory]) -> Callable[[Memory], tuple[float, int, int]]:
    """A sort key over `found`, newest first and the same on every run (`written_order` reversed):
    sessions newest first, then where the session said a memory; sections of one message (a plan, a
    summary) keep the order their author gave them."""
    order = written_order(found)

    def key(m: Memory) -> tuple[float, int, int]:
        when, line, section = order(m)
        return -when.timestamp(), -line, -section

    return key


def title_adds(title: str, content: str) -> bool:
    """A title whose words the content already says ("Unresolved: `make`", then "`make` still fails
    with …") costs tokens and tells the reader nothing. Stop words ("Fix for …") count for neither."""
    words = set(WORD.findall(title.lower())) - STOP_WORDS
    missing = words - set(WORD.findall(content.lower()))
    return len(missing) > max(1.0, TITLE_SLACK * len(words))


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if str(v).strip()]
    return []


def bare(command: object) -> str:
    """A command without how its output was shown: `go test ./... 2>&1 | tail -5` is `go test ./...`."""
    return _SHOWN_HOW.sub("", str(command or "")).strip()


def dedupe(
    lines: list[Line], seen_ids: set[str] | None = None, seen_hashes: set[str] | None = None
) -> list[Line]:
    seen_ids = set() if seen_ids is None else seen_ids
    seen_hashes = set() if seen_hashes is None else seen_hashes
    out = []
    for ln in lines:
        if ln.memory_id and ln.memory_id in seen_ids:
            continue
        if ln.content_hash and ln.content_hash in seen_hashes:
            continue
        if ln.memory_id:
            seen_ids.add(ln.memory_id)
        if ln.content_hash:
            seen_hashes.add(ln.content_hash)
        out.append(ln)
    return out

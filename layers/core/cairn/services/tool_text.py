"""Explicit recall of what tools said past what their excerpts show (`Memory.tool_text`).

An excerpt shows a long tool output as its head, error lines and tail; the sentences and requests of its
middle are kept beside it and indexed apart (`ports.ToolTextSearch`), so they never compete with the
memories and excerpts an answer ranks. Explicit recall (MCP `recall`, REST search) asks for them after
its ranked hits and shows the few lines that bear on the query, each under the call line it came from,
marked as a tool's text: found when asked for, data whatever it says. Nothing Cairn shows unasked (the
block, the prompt hook, the digest) asks for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.domain.errors import Unavailable
from cairn.domain.models import KeyScope, Memory, MemoryFilter, Principal
from cairn.domain.ports import MemoryRepository, SearchIndex, ToolTextSearch
from cairn.search.analyzer import analyze
from cairn.search.language import content_terms
from cairn.search.snippets import left_out_lines
from cairn.services.memories import require

TOOL_TEXT_HITS = 3  # an answer's tool texts: what was asked for, not a second answer
TOOL_TEXT_CHARS = 360  # each one's lines, within this many characters
MAX_QUERY_CHARS = 10_000
# how explicit recall marks it, as `trust.recall_mark` marks an excerpt's own lines of a tool's text
TOOL_TEXT_MARK = "tool text"


@dataclass(frozen=True, slots=True)
class ToolTextHit:
    memory: Memory  # the excerpt whose step ran the tool
    lines: str  # its left-out lines that bear on the query, under their call lines
    score: float  # the engine's BM25 score


def find_tool_text(
    index: SearchIndex,
    memories: MemoryRepository,
    caller: Principal,
    query: str,
    flt: MemoryFilter,
    limit: int = TOOL_TEXT_HITS,
) -> list[ToolTextHit]:
    """The excerpts whose tools' left-out text bears on `query`, best first, with those lines: of the
    caller's team and what `flt` admits that the caller may see. Nothing when the index keeps no tool
    text or cannot answer now (the ranked answer stands on its own)."""
    require(caller, KeyScope.READ)
    flt = caller.confine(flt)
    query = (query or "")[:MAX_QUERY_CHARS]
    if not isinstance(index, ToolTextSearch) or not query.strip():
        return []
    try:
        found = index.search_tool_text(caller.team_id, query, flt, limit * 3)
    except Unavailable:
        return []
    stored = memories.get_many(caller.team_id, [memory_id for memory_id, _ in found])
    terms = set(content_terms(query))
    out: list[ToolTextHit] = []
    for memory_id, score in found:
        m = stored.get(memory_id)
        if m is None or not flt.admits(m) or not caller.sees(m):
            continue
        lines = left_out_lines(m.tool_text, query, TOOL_TEXT_CHARS)
        if lines and _bears(lines, terms):
            out.append(ToolTextHit(m, lines, score))
    return out[:limit]


def _bears(lines: str, terms: set[str]) -> bool:
    """Whether the lines hold every word of the query: a project's logs share some words with almost
    any question (two of them shown with every answer of cc-backend's, its questions never discussed
    included), and this section adds to an answer only what the query names."""
    return terms <= set(analyze(lines))

"""Recall that survives a search-engine outage: when the index is unavailable, score recent memories
from the source of truth by keyword overlap, and say so in the result.

Wraps any SearchIndex. Writes pass straight through (a failed index write must surface, so the indexer
Lambda retries it from the stream); only `search` degrades.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from cairn.domain.errors import Unavailable
from cairn.domain.models import Candidates, IndexedMemory, MemoryFilter
from cairn.domain.ports import MemoryRepository, SearchIndex
from cairn.search.analyzer import analyze, query_terms

log = logging.getLogger(__name__)

SCAN_LIMIT = 2_000  # the newest memories a fallback looks at: bounded work while the engine is down


class KeywordFallbackIndex:
    def __init__(
        self, primary: SearchIndex, memories: MemoryRepository, scan_limit: int = SCAN_LIMIT
    ) -> None:
        self._primary = primary
        self._memories = memories
        self._scan_limit = scan_limit

    def upsert(self, docs: Sequence[IndexedMemory]) -> None:
        self._primary.upsert(docs)

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        self._primary.remove(team_id, memory_ids)

    def clear_team(self, team_id: str) -> None:
        self._primary.clear_team(team_id)

    def search(
        self,
        team_id: str,
        query_text: str,
        query_vector: Sequence[float] | None,
        flt: MemoryFilter,
        k_lexical: int,
        k_semantic: int,
    ) -> Candidates:
        try:
            return self._primary.search(team_id, query_text, query_vector, flt, k_lexical, k_semantic)
        except Unavailable as exc:
            log.warning("search index unavailable, using the keyword fallback: %s", exc.message)
            lexical = self._keyword_scan(team_id, query_text, flt, k_lexical)
            return Candidates(
                lexical=lexical,
                semantic=(),
                degraded=f"search index unavailable ({exc.message}); keyword fallback over recent memories",
            )

    def _keyword_scan(
        self, team_id: str, text: str, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        terms = set(query_terms(text))
        if not terms:
            return ()
        scored: list[tuple[str, float]] = []
        cursor: str | None = None
        seen = 0
        while seen < self._scan_limit:
            page = self._memories.list(team_id, flt, limit=min(500, self._scan_limit - seen), cursor=cursor)
            for m in page.items:
                counts = Counter(analyze(m.search_text()))
                score = sum(1.0 + 0.1 * min(counts[t], 5) for t in terms if counts[t])
                if score:
                    scored.append((m.id, score))
            seen += len(page.items)
            if not page.next_cursor or not page.items:
                break
            cursor = page.next_cursor
        scored.sort(key=lambda pair: -pair[1])
        return tuple(scored[:k])

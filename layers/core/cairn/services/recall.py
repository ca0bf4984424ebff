"""Hybrid recall: BM25 and k-NN candidates, fused by rank, hydrated, decayed, graph-expanded.

Works the same over every `SearchIndex`: the engines only return ranked candidates and all ranking
policy lives here. A leg that cannot run (embedder failure, search engine down) degrades the answer
and says so in `RecallResult.degraded`; recall never fails because of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.domain.errors import InvalidInput
from cairn.domain.models import (
    Candidates,
    Memory,
    MemoryFilter,
    RecallHit,
    RecallResult,
    utcnow,
)
from cairn.domain.ports import Embedder, MemoryRepository, RelationRepository, SearchIndex
from cairn.search.analyzer import analyze, query_terms
from cairn.search.fusion import access_factor, recency_factor, reciprocal_rank_fusion

log = logging.getLogger(__name__)

MAX_LIMIT = 100
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class RecallTuning:
    """Ranking knobs; the defaults are the ones measured on the LoCoMo dev split (docs/benchmarks.md)."""

    k_lexical: int = 100
    k_semantic: int = 100
    rrf_k: float = 60.0
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    # pseudo-relevance feedback: terms of the top fused hits run as a third, lighter lexical leg
    prf_docs: int = 0
    prf_terms: int = 10
    prf_weight: float = 0.0
    # decay multiplies the fused score; the floor keeps old memories findable
    recency_half_life_days: float = 90.0
    recency_floor: float = 0.8
    access_weight: float = 0.02
    pinned_boost: float = 1.2
    # 1-hop graph expansion from the best hits
    graph_seeds: int = 3
    graph_factor: float = 0.5
    # how many fused candidates to hydrate beyond `limit`, so filtering and decay can reorder
    hydrate_extra: int = 20


class RecallService:
    def __init__(
        self,
        memories: MemoryRepository,
        index: SearchIndex,
        embedder: Embedder,
        relations: RelationRepository | None = None,
        clock: Callable[[], datetime] = utcnow,
        tuning: RecallTuning | None = None,
        record_access: bool = True,
    ) -> None:
        self._memories = memories
        self._index = index
        self._embedder = embedder
        self._relations = relations
        self._clock = clock
        self._tuning = tuning or RecallTuning()
        self._record_access = record_access

    def recall(self, team_id: str, query: str, flt: MemoryFilter, limit: int = 10) -> RecallResult:
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", limit=limit)
        query = (query or "")[:MAX_QUERY_CHARS]
        if not query.strip():
            return RecallResult(hits=())
        t = self._tuning
        degraded: list[str] = []

        vector = self._embed(query, degraded)
        candidates = self._index.search(team_id, query, vector, flt, t.k_lexical, t.k_semantic)
        if candidates.degraded:
            degraded.append(candidates.degraded)
        lexical = [memory_id for memory_id, _ in candidates.lexical]
        semantic = [memory_id for memory_id, _ in candidates.semantic]
        fused = reciprocal_rank_fusion(
            [lexical, semantic], k=t.rrf_k, weights=[t.lexical_weight, t.semantic_weight]
        )
        if t.prf_docs and t.prf_weight and fused:
            feedback = self._feedback_ranking(team_id, query, flt, fused[: t.prf_docs])
            fused = reciprocal_rank_fusion(
                [lexical, semantic, feedback],
                k=t.rrf_k,
                weights=[t.lexical_weight, t.semantic_weight, t.prf_weight],
            )

        hits = self._hydrate(team_id, fused[: limit + t.hydrate_extra], flt, candidates)
        hits = self._expand(team_id, hits, flt)
        hits = sorted(hits, key=lambda h: -h.score)[:limit]
        if self._record_access and hits:
            self._memories.record_access(team_id, [h.memory.id for h in hits], self._clock())
        return RecallResult(hits=tuple(hits), degraded="; ".join(degraded) or None)

    # -- legs ---------------------------------------------------------------------------------------

    def _embed(self, query: str, degraded: list[str]) -> list[float] | None:
        try:
            return self._embedder.embed_query(query)
        except Exception as exc:  # any model failure: keep the keyword leg rather than fail
            log.warning("query embedding failed, recalling by keywords only", exc_info=True)
            degraded.append(f"semantic search unavailable: {type(exc).__name__}")
            return None

    def _feedback_ranking(
        self, team_id: str, query: str, flt: MemoryFilter, top: Sequence[tuple[str, float]]
    ) -> list[str]:
        """Pseudo-relevance feedback: re-query BM25 with the query plus the top hits' salient terms."""
        docs = self._memories.get_many(team_id, [memory_id for memory_id, _ in top])
        own = set(query_terms(query))
        counts: dict[str, float] = {}
        for rank, (memory_id, _) in enumerate(top):
            memory = docs.get(memory_id)
            if memory is None:
                continue
            terms = set(analyze(memory.search_text())) - own
            for term in terms:
                counts[term] = counts.get(term, 0.0) + 1.0 / (rank + 1)
        expansion = sorted(counts, key=lambda term: (-counts[term], term))[: self._tuning.prf_terms]
        if not expansion:
            return []
        text = " ".join([*query_terms(query), *expansion])
        result = self._index.search(team_id, text, None, flt, self._tuning.k_lexical, 0)
        return [memory_id for memory_id, _ in result.lexical]

    # -- ranking ------------------------------------------------------------------------------------

    def _hydrate(
        self,
        team_id: str,
        fused: Sequence[tuple[str, float]],
        flt: MemoryFilter,
        candidates: Candidates,
    ) -> list[RecallHit]:
        found = self._memories.get_many(team_id, [memory_id for memory_id, _ in fused])
        lexical_rank = {memory_id: i + 1 for i, (memory_id, _) in enumerate(candidates.lexical)}
        semantic_rank = {memory_id: i + 1 for i, (memory_id, _) in enumerate(candidates.semantic)}
        now = self._clock()
        hits = []
        for memory_id, score in fused:
            memory = found.get(memory_id)
            # the index is derived data and may lag the repository: the repository decides
            if memory is None or not flt.admits(memory):
                continue
            hits.append(
                RecallHit(
                    memory=memory,
                    score=score * self._prior(memory, now),
                    lexical_rank=lexical_rank.get(memory_id),
                    semantic_rank=semantic_rank.get(memory_id),
                )
            )
        return hits

    def _prior(self, memory: Memory, now: datetime) -> float:
        """Query-independent multiplier: recency of writing or use, frequency of use, pinning."""
        t = self._tuning
        factor = recency_factor(
            memory.created_at, memory.last_accessed_at, now, t.recency_half_life_days, t.recency_floor
        )
        factor *= access_factor(memory.access_count, t.access_weight)
        if memory.pinned:
            factor *= t.pinned_boost
        return factor

    def _expand(self, team_id: str, hits: list[RecallHit], flt: MemoryFilter) -> list[RecallHit]:
        """Add memories one relation away from the best hits, scored below the hit they hang off."""
        t = self._tuning
        if self._relations is None or not hits or t.graph_seeds <= 0:
            return hits
        seen = {h.memory.id for h in hits}
        proposals: dict[str, float] = {}
        for seed in sorted(hits, key=lambda h: -h.score)[: t.graph_seeds]:
            for rel in self._relations.for_memory(team_id, seed.memory.id):
                if rel.valid_to is not None:
                    continue
                other = rel.target_id if rel.source_id == seed.memory.id else rel.source_id
                if other in seen:
                    continue
                score = seed.score * t.graph_factor * max(min(rel.weight, 1.0), 0.0)
                proposals[other] = max(proposals.get(other, 0.0), score)
        if not proposals:
            return hits
        found = self._memories.get_many(team_id, list(proposals))
        extra = [
            RecallHit(memory=m, score=proposals[m.id], via="graph") for m in found.values() if flt.admits(m)
        ]
        return hits + extra

"""Hybrid recall: BM25 and k-NN candidates, fused by rank, re-ranked by relevance feedback, decayed.

Works the same over every `SearchIndex`: the engines only return ranked candidates and all ranking
policy lives here, so local and AWS deployments rank alike. A leg that cannot run (embedder failure,
search engine trouble) degrades the answer and says so in `RecallResult.degraded`; recall never fails
because of it.

Steps: embed the query; one `index.search` for both legs; reciprocal-rank fusion; hydrate the best
fused candidates from the repository (the source of truth: ids it no longer has or the filter rejects
are dropped); pseudo-relevance feedback over that pool as a third ranking; query-independent priors
(recency, use, pinning); each hit's relevance; for a question about the present, the newer session's
hits first; one session's near-tied hits, its later lines first; 1-hop graph expansion; record access.
If the index is unavailable, BM25 over the newest memories the filter admits stands in for both legs.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from cairn.domain.errors import InvalidInput, Unavailable
from cairn.domain.models import (
    Candidates,
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    RecallHit,
    RecallResult,
    utcnow,
)
from cairn.domain.ports import (
    BusinessMetric,
    Embedder,
    MemoryRepository,
    Metrics,
    NoMetrics,
    RelationRepository,
    SearchIndex,
)
from cairn.domain.vocabulary import Tag
from cairn.search.analyzer import analyze, query_terms
from cairn.search.fusion import (
    access_factor,
    later_first,
    recency_factor,
    reciprocal_rank_fusion,
    session_recency,
)
from cairn.search.intent import asks_present_state
from cairn.search.language import written_in
from cairn.search.relevance import FLOOR, Relevance, never_discussed, only_common_ground, query_parts
from cairn.services.memories import require
from cairn.services.tool_text import ToolTextHit, find_tool_text

log = logging.getLogger(__name__)

MAX_LIMIT = 100
MAX_QUERY_CHARS = 10_000
FALLBACK_POOL = 500  # newest memories scanned when the search index is unavailable
# what of the candidates says which language they are written in: the openings of the best few
POOL_SAMPLE, POOL_SAMPLE_CHARS = 10, 300
# One shared worker: query embedding overlaps the BM25 leg; more workers would only queue on the cores.
_EMBEDDING_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-embed")


@dataclass(frozen=True, slots=True)
class RecallTuning:
    """Ranking knobs. Defaults were measured on the LoCoMo dev split; docs/benchmarks.md has the ablations."""

    k_lexical: int = 100
    k_semantic: int = 100
    # A small k lets each leg's top ranks dominate; at the textbook 60, candidates deep in both pools
    # outrank one leg's best hit (dev R@10 0.642 at 60, 0.694 at 10).
    rrf_k: float = 10.0
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    # Pseudo-relevance feedback: the query plus the most frequent terms of the top `prf_docs` fused hits
    # re-score the hydrated pool with BM25, and that ranking joins the fusion (dev R@10 0.692 -> 0.719).
    # Scoring the pool, not the whole index, keeps it engine-independent and ~2 ms at 10k memories,
    # where a second engine query with the expanded terms cost ~15 ms for the same gain.
    prf_docs: int = 5
    prf_terms: int = 10
    prf_weight: float = 1.5
    pool: int = 50  # fused candidates hydrated and re-ranked; at least limit + 20
    # Priors multiply the fused score. Recency only breaks near-ties: with memories written at their real
    # (months apart) dates, a floor of 0.8 cost dev R@10 0.006, 0.9 cost 0.002, 0.95 nothing.
    recency_half_life_days: float = 90.0
    recency_floor: float = 0.95
    # Off: boosting by recall frequency cost dev R@10 (0.02: -0.003 to -0.005, 0.1: -0.013); recall
    # counts mostly echo earlier queries, not this one.
    access_weight: float = 0.0
    pinned_boost: float = 1.2
    # 1-hop graph expansion from the best hits, scored below the hit they hang off
    graph_seeds: int = 3
    graph_factor: float = 0.5
    # When no hit's relevance (search.relevance) reaches this, or the query names something no candidate
    # mentions, recall answers "nothing relevant" instead of its least bad guesses. None: always answer.
    floor: float | None = FLOOR
    common_ground_of: int = 10  # the leading hits that must share more than common ground with a query
    # transcript excerpts rank just below an equally matching extracted memory: memories are the answer,
    # excerpts make sure nothing said is lost
    excerpt_factor: float = 0.9
    # A plan's sections say what the agent meant to do, not what was done, and a plan fills an answer with
    # its Context / Files / Verification sections: each ranks as an excerpt does, below an equally matching
    # memory of what happened. Four projects (multi_session_eval, kept stores): cc-backend hit@10 0.538 ->
    # 0.577 and one stale-first answer fewer, fittoday 0.434 -> 0.453, session-bridge and safecast as
    # they were; coding sets as they were. At 0.8 (below excerpts) cc-backend 0.596, but entire-cli's prompt
    # hook lost two answers its approved plan gives (0.724 -> 0.655).
    plan_factor: float = 0.9
    # A question about the present ("is X still failing?", "which host do we deploy to now?"): the
    # sessions of the best `present_sessions_of` hits that bear on it are ranked newest first, and each
    # older one's hits are worth `present_decay` times the next newer one's (at least `present_floor`;
    # hits of no such session count as the oldest), so the session that settled a matter outranks the
    # one that left it open. 1.0 turns it off. Multi-session dev set: 3 of 4 stale-first answers gone.
    present_decay: float = 0.5
    present_floor: float = 0.2
    present_sessions_of: int = 10
    # Within one session, hits within this share of each other's score rank latest line first
    # (`search.fusion.later_first`): the session ended knowing its later account. 0 turns it off.
    # Multi-session dev set, 0.03 / 0.05-0.10 / 0.15-0.25: hit@10 0.833 / 0.854 / 0.854, stale-first
    # answers 2 / 1 / 1 (0.812 and 2 without); the coding sets and LoCoMo do not move.
    later_within: float = 0.05


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
        overlap_embedding: bool = True,
        metrics: Metrics | None = None,
    ) -> None:
        self._memories = memories
        self._metrics = metrics or NoMetrics()
        self._index = index
        self._embedder = embedder
        self._relations = relations
        self._clock = clock
        self._tuning = tuning or RecallTuning()
        self._record_access = record_access
        self._overlap = overlap_embedding

    def recall(self, caller: Principal, query: str, flt: MemoryFilter, limit: int = 10) -> RecallResult:
        """The `limit` best memories for `query` that `flt` admits and the caller may see, best first:
        of the caller's team only, and needing a key that may read."""
        require(caller, KeyScope.READ)
        team_id = caller.team_id
        flt = caller.confine(flt)
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", limit=limit)
        query = (query or "")[:MAX_QUERY_CHARS]
        if not query.strip():
            return RecallResult(hits=())
        t = self._tuning
        degraded: list[str] = []

        try:
            candidates = self._search(team_id, query, flt, degraded)
        except Unavailable as exc:
            log.warning("search index unavailable, recalling by keywords over recent memories: %s", exc)
            degraded.append(
                f"search index unavailable; keyword search over the newest {FALLBACK_POOL} memories"
            )
            hits = self._fallback(team_id, query, flt)
            return self._finish(team_id, self._judge(query, hits, {}), limit, degraded, bool(hits))
        if candidates.degraded:
            degraded.append(candidates.degraded)
        rankings = [[i for i, _ in candidates.lexical], [i for i, _ in candidates.semantic]]
        weights = [t.lexical_weight, t.semantic_weight]
        fused = reciprocal_rank_fusion(rankings, k=t.rrf_k, weights=weights)

        pool = self._hydrate(team_id, fused[: max(t.pool, limit + 20)], flt)
        if t.prf_docs and t.prf_weight and pool:
            rankings.append(feedback_ranking(query, pool, t.prf_docs, t.prf_terms))
            weights.append(t.prf_weight)
            fused = reciprocal_rank_fusion(rankings, k=t.rrf_k, weights=weights)

        hits = self._score(pool, fused, candidates)
        judged = self._later_first(self._present(query, self._judge(query, hits, dict(candidates.semantic))))
        return self._finish(team_id, self._expand(team_id, judged, flt), limit, degraded, bool(hits))

    def tool_text(self, caller: Principal, query: str, flt: MemoryFilter) -> list[ToolTextHit]:
        """What tools said past what their excerpts show that bears on `query` (`services.tool_text`):
        explicit recall's, beside its ranked hits."""
        return find_tool_text(self._index, self._memories, caller, query, flt)

    def _finish(
        self, team_id: str, hits: list[RecallHit], limit: int, degraded: list[str], found: bool
    ) -> RecallResult:
        hits = sorted(hits, key=lambda h: (-h.score, h.memory.id))[:limit]
        if self._record_access and hits:
            self._memories.record_access(team_id, [h.memory.id for h in hits], self._clock())
        result = RecallResult(
            hits=tuple(hits), degraded="; ".join(degraded) or None, nothing_relevant=found and not hits
        )
        if result.degraded:
            self._metrics.count(BusinessMetric.RECALL_DEGRADED)
        if result.nothing_relevant:
            self._metrics.count(BusinessMetric.ABSTENTIONS)
        return result

    def _judge(self, query: str, hits: list[RecallHit], cosines: dict[str, float]) -> list[RecallHit]:
        """Each hit's relevance; with a floor, nothing when no hit clears it, when the query names
        something no candidate mentions, or when the leading hits share only the project's common
        ground with it (`search.relevance.only_common_ground`)."""
        if not hits:
            return hits
        pool_terms = [set(_terms(h.memory.search_text())) for h in hits]
        floor = self._tuning.floor
        # the whole query, and each part of a prompt of several parts: a hit bears on the prompt when it
        # bears on any reading the store has discussed (a part naming what no memory mentions is left out)
        # a part whose own language is unclear is read in the prompt's; a question too short to say its
        # language, in its candidates' (`search.language`), whose sample is read only then
        spoken = written_in(query) or (
            written_in(" ".join(h.memory.content[:POOL_SAMPLE_CHARS] for h in hits[:POOL_SAMPLE]))
            if floor is not None
            else None
        )
        readings = [
            q
            for q in (query, *query_parts(query))
            if floor is None or not never_discussed(q, pool_terms, spoken)
        ]
        if not readings:
            return []
        judges = [Relevance(q, pool_terms) for q in readings]
        judged = [
            replace(
                h,
                relevance=max(j.score(cosines.get(h.memory.id), terms, _passages(h.memory)) for j in judges),
            )
            for h, terms in zip(hits, pool_terms, strict=True)
        ]
        # the floor is a question about the answer, not each line of it: when the best hit clears it, the
        # ranking stands (weaker hits show their relevance); when none does, there is nothing relevant.
        # Cutting each hit at the floor instead cost LoCoMo dev R@10 0.016 for no negative gained.
        if floor is not None and max(h.relevance for h in judged) < floor:
            return []
        if floor is None:
            return judged
        leading = sorted(judged, key=lambda h: (-h.score, h.memory.id))[: self._tuning.common_ground_of]
        passages = [_passages(h.memory) or (frozenset(_terms(h.memory.search_text())),) for h in leading]
        if only_common_ground(judges, passages, pool_terms, list(cosines.values())):
            return []
        return judged

    def _present(self, query: str, hits: list[RecallHit]) -> list[RecallHit]:
        """For a question about the present, the newer session's account of a matter first: the best
        hits that bear on the query are weighed by their session's rank in time among theirs; the
        rest count as the oldest."""
        t = self._tuning
        if t.present_decay >= 1.0 or not hits or not asks_present_state(query):
            return hits
        vying = sorted(hits, key=lambda h: (-h.score, h.memory.id))[: t.present_sessions_of]
        relevant = [h for h in vying if h.relevance >= FLOOR]
        factors = session_recency(
            [(_source(h.memory), h.memory.valid_from) for h in relevant], t.present_decay, t.present_floor
        )
        lowest = min(factors.values(), default=1.0)
        return [replace(h, score=h.score * factors.get(_source(h.memory), lowest)) for h in hits]

    def _later_first(self, hits: list[RecallHit]) -> list[RecallHit]:
        """One session's near-tied hits, its later account first (`search.fusion.later_first`)."""
        placed = [
            (h.memory.id, h.score, f"{p.session_id}\n{p.transcript_key or ''}", p.line_start)
            for h in hits
            if (p := h.memory.provenance).session_id and p.line_start is not None
        ]
        moved = later_first(placed, self._tuning.later_within)
        return [replace(h, score=moved[h.memory.id]) if h.memory.id in moved else h for h in hits]

    # -- steps --------------------------------------------------------------------------------------

    def _search(self, team_id: str, query: str, flt: MemoryFilter, degraded: list[str]) -> Candidates:
        """Both legs. With `overlap_embedding`, the BM25 leg runs while the query is being embedded
        (both release the GIL), and the k-NN leg follows as its own `search` call."""
        t = self._tuning
        if not self._overlap:
            vector = self._embed(query, degraded)
            return self._index.search(team_id, query, vector, flt, t.k_lexical, t.k_semantic)
        pending = _EMBEDDING_THREAD.submit(self._embed, query, degraded)
        try:
            lexical = self._index.search(team_id, query, None, flt, t.k_lexical, 0)
        finally:
            vector = pending.result()
        if vector is None:
            return lexical
        semantic = self._index.search(team_id, "", vector, flt, 0, t.k_semantic)
        reasons = "; ".join(r for r in (lexical.degraded, semantic.degraded) if r) or None
        return Candidates(lexical=lexical.lexical, semantic=semantic.semantic, degraded=reasons)

    def _embed(self, query: str, degraded: list[str]) -> list[float] | None:
        try:
            return self._embedder.embed_query(query)
        except Exception as exc:  # any model failure: keep the keyword leg rather than fail
            log.warning("query embedding failed, recalling by keywords only", exc_info=True)
            degraded.append(f"semantic search unavailable: {type(exc).__name__}")
            return None

    def _hydrate(self, team_id: str, fused: Sequence[tuple[str, float]], flt: MemoryFilter) -> list[Memory]:
        """The fused candidates as memories, in fused order; the repository, not the index, decides."""
        found = self._memories.get_many(team_id, [memory_id for memory_id, _ in fused])
        pool = (found.get(memory_id) for memory_id, _ in fused)
        return [m for m in pool if m is not None and flt.admits(m)]

    def _fallback(self, team_id: str, query: str, flt: MemoryFilter) -> list[RecallHit]:
        """BM25 of the query over the newest memories the filter admits, from the repository alone."""
        pool = [m for m in self._memories.list(team_id, flt, limit=FALLBACK_POOL).items if flt.admits(m)]
        ranking = feedback_ranking(query, pool, feedback_docs=0, expansion_terms=0)
        by_id = {m.id: m for m in pool}
        now = self._clock()
        return [
            RecallHit(
                memory=by_id[memory_id],
                score=self._prior(by_id[memory_id], now) / (self._tuning.rrf_k + rank),
                lexical_rank=rank,
            )
            for rank, memory_id in enumerate(ranking, start=1)
        ]

    def _score(
        self, pool: Sequence[Memory], fused: Sequence[tuple[str, float]], candidates: Candidates
    ) -> list[RecallHit]:
        # Feedback only adds to pool members' scores, so the best of the re-fused list are all in the pool.
        score = dict(fused)
        lexical_rank = {memory_id: i + 1 for i, (memory_id, _) in enumerate(candidates.lexical)}
        semantic_rank = {memory_id: i + 1 for i, (memory_id, _) in enumerate(candidates.semantic)}
        now = self._clock()
        return [
            RecallHit(
                memory=m,
                score=score.get(m.id, 0.0) * self._prior(m, now),
                lexical_rank=lexical_rank.get(m.id),
                semantic_rank=semantic_rank.get(m.id),
            )
            for m in pool
        ]

    def _prior(self, memory: Memory, now: datetime) -> float:
        """Query-independent multiplier: recency of writing or use, frequency of use, pinning; an excerpt
        and a plan's section rank below an extracted memory of what happened."""
        t = self._tuning
        factor = recency_factor(
            memory.created_at, memory.last_accessed_at, now, t.recency_half_life_days, t.recency_floor
        )
        factor *= access_factor(memory.access_count, t.access_weight)
        if memory.pinned:
            factor *= t.pinned_boost
        if memory.kind is MemoryKind.EXCERPT:
            factor *= t.excerpt_factor
        elif Tag.PLAN in memory.tags:
            factor *= t.plan_factor
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
        # a memory one relation away from a relevant hit is relevant through it, whatever its words
        extra = [
            RecallHit(memory=m, score=proposals[m.id], via="graph", relevance=FLOOR)
            for m in found.values()
            if flt.admits(m)
        ]
        return hits + extra


def _source(memory: Memory) -> str:
    """What a memory was learned from: its session, or itself when written outside any."""
    return memory.provenance.session_id or memory.id


_BM25_K1 = 1.2
PASSAGE_LINES = 3  # the window within which a long text's words must cover the query
_BM25_B = 0.75


@lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    # Content-addressed, so an edited memory simply misses. Recalls keep pooling the same popular
    # memories; re-analysing them was a third of the feedback step.
    return tuple(analyze(text))


def _passages(memory: Memory) -> tuple[frozenset[str], ...]:
    return _passage_terms(memory.title or "", memory.content)


@lru_cache(maxsize=8192)
def _passage_terms(title: str, content: str) -> tuple[frozenset[str], ...]:
    """Terms of each few consecutive lines of a long text, each with its title's: the words of an
    answer stand together, and a long excerpt that has every word somewhere is not thereby about it."""
    lines = [ln for ln in content.splitlines() if ln.strip()]
    if len(lines) <= PASSAGE_LINES:
        return ()
    heading = set(analyze(title))
    per_line = [set(analyze(ln)) for ln in lines]
    return tuple(
        frozenset(heading.union(*per_line[i : i + PASSAGE_LINES]))
        for i in range(len(per_line) - PASSAGE_LINES + 1)
    )


def feedback_ranking(
    query: str, pool: Sequence[Memory], feedback_docs: int, expansion_terms: int
) -> list[str]:
    """Pseudo-relevance feedback (RM3-like) confined to `pool`, best first.

    Terms shared by the top `feedback_docs` memories (weighted by their rank) extend the query; BM25
    with statistics of the pool itself then scores every pool memory against the extended query.
    Memories matching nothing are left out. Deterministic: ties go by term, then pool order. With
    `feedback_docs=0` this is plain BM25 of the query over the pool.
    """
    if not pool:
        return []
    terms = [_terms(m.search_text()) for m in pool]
    own = query_terms(query)
    weight = Counter({term: 1.0 for term in own})
    votes: Counter[str] = Counter()
    for rank, doc_terms in enumerate(terms[:feedback_docs]):
        for term in set(doc_terms).difference(own):
            votes[term] += 1.0 / (rank + 1)
    for term, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:expansion_terms]:
        weight[term] += 1.0
    if not weight:
        return []

    n = len(terms)
    df = Counter(term for doc_terms in terms for term in set(doc_terms))
    avg_len = sum(len(d) for d in terms) / n or 1.0  # every pool text may be all stop words
    scored = []
    for position, (memory, doc_terms) in enumerate(zip(pool, terms, strict=True)):
        tf = Counter(doc_terms)
        norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * len(doc_terms) / avg_len)
        score = sum(
            w
            * math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            * tf[term]
            * (_BM25_K1 + 1)
            / (tf[term] + norm)
            for term, w in weight.items()
            if tf[term]
        )
        if score > 0:
            scored.append((-score, position, memory.id))
    return [memory_id for _, _, memory_id in sorted(scored)]

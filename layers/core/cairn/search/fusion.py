"""Rank fusion and score decay: the one implementation every search engine's results go through.

Reciprocal-rank fusion uses ranks only, so BM25 scores and cosine similarities never have to be put
on one scale, and a leg that returned nothing simply contributes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    k: float = 60.0,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists (best first) into one list of (id, score), best first.

    score(id) = sum over lists of weight / (k + rank), rank starting at 1. An id repeated within one
    list counts at its best rank only. Ties go to the id with the better best rank, then by id, so the
    order never depends on dict iteration.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
            best_rank[doc_id] = min(best_rank.get(doc_id, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best_rank[item[0]], item[0]))


def half_life_decay(age_days: float, half_life_days: float) -> float:
    """1.0 for something new, 0.5 after one half-life; future timestamps count as new."""
    if half_life_days <= 0:
        raise ValueError("half_life_days must be positive")
    return math.pow(0.5, max(age_days, 0.0) / half_life_days)


def age_days(then: datetime, now: datetime) -> float:
    return (now - then).total_seconds() / 86400.0


def recency_factor(
    created_at: datetime,
    last_accessed_at: datetime | None,
    now: datetime,
    half_life_days: float,
    floor: float,
) -> float:
    """A multiplier in [floor, 1]: memories used or written recently keep their full score.

    The floor keeps an old but relevant memory findable: decay only reorders near-equals.
    """
    freshest = max(created_at, last_accessed_at) if last_accessed_at else created_at
    return floor + (1.0 - floor) * half_life_decay(age_days(freshest, now), half_life_days)


def access_factor(access_count: int, weight: float) -> float:
    """A multiplier >= 1 growing with the log of how often a memory was recalled."""
    return 1.0 + weight * math.log1p(max(access_count, 0))


def session_recency(written: Sequence[tuple[str, datetime]], decay: float, floor: float) -> dict[str, float]:
    """A multiplier per source (a session, or a memory of none): 1.0 for the newest source, `decay`
    times less for each older one, never below `floor`. Ranks, not ages: sessions a day or a month
    apart weigh alike, and a project's pace does not matter.

    `written` holds each hit's (source, time written); a source's time is its newest hit's.
    """
    newest: dict[str, datetime] = {}
    for source, when in written:
        if source not in newest or when > newest[source]:
            newest[source] = when
    order = sorted(newest, key=lambda s: (newest[s], s), reverse=True)
    return {source: max(decay**rank, floor) for rank, source in enumerate(order)}


def later_first(hits: Sequence[tuple[str, float, str, int]], within: float) -> dict[str, float]:
    """Near-ties of one session go to its later account: the new score of each hit that moves.

    `hits` holds each hit's (id, score, source, line), `source` naming one transcript of one session.
    Walking one source's hits best first, a hit within `within` (a share) of the score of the best hit
    of its run joins the run; each run is then reordered latest line first, each hit taking the score
    of the place it moves to. A session's later lines knew what its earlier ones did: the agent that
    first blamed the auth store and then fixed the deploy secret ends the session knowing the second.
    Hits of different sources never trade places, and one that clearly matches better stays ahead.
    """
    if within <= 0:
        return {}
    by_source: dict[str, list[tuple[str, float, int]]] = {}
    for hit_id, score, source, line in sorted(hits, key=lambda h: (-h[1], h[0])):
        by_source.setdefault(source, []).append((hit_id, score, line))
    moved: dict[str, float] = {}
    for ranked in by_source.values():
        start = 0
        while start < len(ranked):
            end = start + 1
            while end < len(ranked) and ranked[end][1] >= ranked[start][1] * (1 - within):
                end += 1
            run = ranked[start:end]
            places = [score for _, score, _ in run]
            for (hit_id, score, _), place in zip(
                sorted(run, key=lambda h: (-h[2], h[0])), places, strict=True
            ):
                if place != score:
                    moved[hit_id] = place
            start = end
    return moved

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

"""Reciprocal-rank fusion, the decay multipliers and pseudo-relevance feedback: ranking without I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cairn.domain.models import Memory, MemoryKind
from cairn.search.fusion import (
    access_factor,
    half_life_decay,
    later_first,
    recency_factor,
    reciprocal_rank_fusion,
    session_recency,
)
from cairn.services.recall import feedback_ranking

pytestmark = pytest.mark.unit

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def test_an_id_ranked_by_both_lists_beats_ids_ranked_by_one():
    fused = reciprocal_rank_fusion([["a", "b"], ["c", "b"]])
    assert fused[0][0] == "b"


def test_scores_are_the_sum_of_weight_over_k_plus_rank():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b"]], k=10, weights=[2.0, 1.0]))
    assert fused["a"] == pytest.approx(2 / 11)
    assert fused["b"] == pytest.approx(2 / 12 + 1 / 11)


def test_a_heavier_list_wins_a_disagreement():
    assert reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0, 1.5])[0][0] == "b"


def test_ties_break_by_best_rank_then_id_so_the_order_is_stable():
    assert [i for i, _ in reciprocal_rank_fusion([["b", "a"], ["a", "b"]])] == ["a", "b"]
    assert [i for i, _ in reciprocal_rank_fusion([["y"], ["x"]])] == ["x", "y"]


def test_empty_lists_contribute_nothing():
    assert reciprocal_rank_fusion([[], ["a"]]) == reciprocal_rank_fusion([["a"]], weights=[1.0])
    assert reciprocal_rank_fusion([[], []]) == []


def test_an_id_repeated_in_one_list_counts_once_at_its_best_rank():
    fused = dict(reciprocal_rank_fusion([["a", "a"]], k=0))
    assert fused["a"] == pytest.approx(1.0)


def test_one_weight_is_needed_per_list():
    with pytest.raises(ValueError, match="one weight per ranking"):
        reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0])


def test_half_life_decay_halves_per_half_life_and_never_grows():
    assert half_life_decay(0, 30) == 1.0
    assert half_life_decay(30, 30) == pytest.approx(0.5)
    assert half_life_decay(-5, 30) == 1.0


def test_recency_factor_stays_between_the_floor_and_one():
    assert recency_factor(NOW, None, NOW, 30, 0.8) == pytest.approx(1.0)
    assert recency_factor(NOW - timedelta(days=3000), None, NOW, 30, 0.8) == pytest.approx(0.8)


def test_a_recent_access_refreshes_an_old_memory():
    old = NOW - timedelta(days=365)
    assert recency_factor(old, NOW, NOW, 30, 0.5) == pytest.approx(1.0)


def test_access_factor_grows_slowly_with_use():
    assert access_factor(0, 0.1) == 1.0
    assert 1.0 < access_factor(10, 0.1) < access_factor(100, 0.1) < 1.5


def memories(*contents: str) -> list[Memory]:
    return [Memory(id=f"m{i}", team_id="t", kind=MemoryKind.FACT, content=c) for i, c in enumerate(contents)]


def test_feedback_finds_a_memory_sharing_words_with_the_top_hits_but_not_with_the_query():
    pool = memories(
        "the deploy broke: terraform state lock stuck",
        "terraform state lock stuck again after the deploy",
        "unrelated note about lunch",
        "force-unlock the terraform state lock",  # no query word at all
    )
    ranking = feedback_ranking("why did the deploy break", pool, feedback_docs=2, expansion_terms=5)
    assert ranking[:2] == ["m0", "m1"]
    assert "m3" in ranking
    assert "m2" not in ranking


def test_feedback_over_an_empty_pool_or_a_query_of_stop_words_ranks_nothing():
    assert feedback_ranking("deploy", [], feedback_docs=3, expansion_terms=5) == []
    assert feedback_ranking("what is it?", memories("what is it"), feedback_docs=3, expansion_terms=5) == []


def test_sessions_weigh_by_their_rank_in_time_newest_first():
    day = timedelta(days=1)
    written = [("s1", NOW - 30 * day), ("s2", NOW - 2 * day), ("s3", NOW - day), ("s1", NOW - 29 * day)]
    assert session_recency(written, decay=0.5, floor=0.2) == {"s3": 1.0, "s2": 0.5, "s1": 0.25}


def test_a_session_far_back_keeps_the_floor_and_a_pace_of_months_weighs_as_one_of_days():
    days = session_recency([(f"s{i}", NOW - timedelta(days=i)) for i in range(5)], decay=0.5, floor=0.2)
    months = session_recency(
        [(f"s{i}", NOW - timedelta(days=30 * i)) for i in range(5)], decay=0.5, floor=0.2
    )
    assert days == months
    assert days["s4"] == 0.2


def test_near_tied_hits_of_one_session_rank_its_later_account_first():
    hits = [("early", 0.240, "s1", 332), ("other", 0.238, "s2", 10), ("late", 0.232, "s1", 546)]
    assert later_first(hits, within=0.05) == {"late": 0.240, "early": 0.232}


def test_a_hit_that_clearly_matches_better_keeps_its_place_over_a_later_one():
    assert later_first([("early", 0.30, "s1", 10), ("late", 0.20, "s1", 900)], within=0.05) == {}


def test_hits_of_different_sessions_never_trade_places():
    assert later_first([("a", 0.240, "s1", 10), ("b", 0.239, "s2", 900)], within=0.05) == {}


def test_a_run_of_near_ties_is_measured_from_its_best_hit_not_chained():
    hits = [("l10", 1.00, "s", 10), ("l20", 0.96, "s", 20), ("l30", 0.92, "s", 30), ("l40", 0.89, "s", 40)]
    # 0.96 is within 5 % of 1.00; 0.92 is not, and starts a run of its own with 0.89
    assert later_first(hits, within=0.05) == {"l20": 1.00, "l10": 0.96, "l40": 0.92, "l30": 0.89}


def test_later_first_is_off_at_zero():
    assert later_first([("early", 0.240, "s1", 1), ("late", 0.239, "s1", 2)], within=0.0) == {}

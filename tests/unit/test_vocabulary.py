"""Which words of a query name something specific (search.vocabulary) and what that means for abstention."""

from __future__ import annotations

import pytest
from cairn.search.analyzer import analyze
from cairn.search.relevance import named_terms, never_discussed
from cairn.search.vocabulary import is_common, misspells, uncommon_words

pytestmark = pytest.mark.unit


def test_words_and_terms_of_art_english_text_uses_and_their_inflections_are_common():
    words = ("retried", "unmerged", "redeployed", "deploying", "workaround", "toolchain", "invoke")
    for word in words:
        assert is_common(word), word


def test_a_lowercase_word_general_english_lacks_names_a_specific_thing():
    assert uncommon_words("What autovacuum settings did we tune on the markers table?") == ["autovacuum"]
    assert uncommon_words("is kubectl or pgbouncer involved?") == ["kubectl", "pgbouncer"]
    assert uncommon_words("how do we ship it") == []


def test_short_words_paths_and_identifiers_are_left_to_the_other_rules():
    assert uncommon_words("run gofmt on src/autovacuum.go and my_autovacuum") == []


def test_a_rare_word_nothing_mentions_means_the_question_was_never_discussed():
    pool = [set(analyze("We added an index on the markers table")), set(analyze("VACUUM ran for an hour"))]
    assert named_terms("What autovacuum settings did we tune?") == ["autovacuum"]
    question = "What autovacuum settings did we tune on the markers table?"
    assert never_discussed(question, pool) == ["autovacuum"]
    assert never_discussed("What did we tune on the markers table?", pool) == []


def test_a_rare_word_the_candidates_hold_is_discussed():
    pool = [set(analyze("autovacuum_vacuum_scale_factor = 0.05 on markers"))]
    assert never_discussed("What autovacuum settings did we tune on the markers table?", pool) == []


def test_a_slip_of_the_keys_for_a_word_the_candidates_hold_is_no_new_name():
    pool = [set(analyze("the spectrum graphs are not shown when a spectrum point is clicked"))]
    assert never_discussed("why are the sepctrum graphs gone?", pool) == []
    assert misspells("sepctrum", {"spectrum"})
    assert not misspells("autovacuum", {"vacuum", "autocomplet"})


def test_a_word_one_edit_from_an_english_word_is_a_slip_not_a_name():
    assert uncommon_words("What would she pursue in her educaton?") == []
    assert uncommon_words("Which torunament did he win after the funraiser?") == []

"""The analyzer: what terms a text becomes, for documents and queries alike."""

from __future__ import annotations

import pytest
from cairn.search.analyzer import STOP_WORDS, analyze, analyzed_text, fts5_match_query, query_terms

pytestmark = pytest.mark.unit


def test_words_are_lower_cased_stemmed_and_stop_words_dropped():
    assert analyze("When did Caroline go to the LGBTQ support groups?") == [
        "carolin",
        "go",
        "lgbtq",
        "support",
        "group",
    ]


def test_inflected_forms_meet_on_one_stem():
    assert analyze("painting") == analyze("paints") == analyze("painted")


def test_possessives_and_curly_apostrophes_fold_to_the_plain_word():
    assert analyze("Caroline's") == analyze("Caroline’s") == analyze("Caroline")


def test_contractions_are_stop_words():
    assert analyze("don't won’t it's") == []


def test_diacritics_and_unicode_forms_are_folded():
    assert analyze("Café ｆｕｌｌｗｉｄｔｈ") == analyze("cafe fullwidth")


def test_identifiers_match_whole_and_by_their_parts():
    terms = analyze("parseHttpURL")
    assert "parsehttpurl" in terms
    assert {"pars", "http", "url"} <= set(terms)
    assert analyze("max_tokens") == analyze("max tokens")


def test_numbers_are_kept():
    assert analyze("[8 May, 2023] v2") == ["8", "may", "2023", "v2"]


def test_punctuation_and_emoji_vanish():
    assert analyze("?! ... 🦀 --- ()") == []


def test_analyzed_text_is_the_terms_joined_by_spaces():
    assert analyzed_text("Deploys failed!") == "deploy fail"


def test_query_terms_are_distinct_in_first_seen_order_and_capped():
    assert query_terms("redis cache redis eviction") == ["redi", "cach", "evict"]
    assert len(query_terms(" ".join(f"word{i}" for i in range(500)))) == 64


def test_very_long_words_are_truncated():
    assert all(len(t) <= 64 for t in analyze("x" * 10_000))


def test_the_stop_list_holds_question_words():
    assert {"what", "when", "did", "the"} <= STOP_WORDS


def test_match_queries_quote_every_term_so_nothing_is_an_operator():
    assert fts5_match_query(["and", "not", 'a"b', "col:val"]) == '"and" OR "not" OR "a""b" OR "col:val"'


def test_an_empty_term_list_makes_an_empty_match_query():
    assert fts5_match_query([]) == ""


def test_a_script_written_without_spaces_is_read_as_pairs_of_letters_so_a_question_meets_its_text():
    document = set(analyze("ช่วยแก้บั๊กหน้าชำระเงินให้หน่อย"))  # Thai: "please fix the checkout page bug"
    question = set(analyze("แก้บั๊กหน้าชำระเงิน"))
    assert question <= document
    assert analyze("本番DBの設定") == ["本番", "db", "の設", "設定"]
    assert set(analyze("生产服务器的配置")) & set(analyze("修改生产服务器配置")) >= {"生产", "服务", "务器"}


def test_a_word_keeps_its_vowel_signs():
    # Hindi: Python's \w knows no combining mark, and "डेटाबेस" fell apart at each vowel sign
    assert analyze("प्रोडक्शन डेटाबेस पर") == ["परोडकशन", "डेटाबेस", "पर"]

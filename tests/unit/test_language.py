"""Which language a question is written in (search.language), and what recall's abstention reads off it."""

from __future__ import annotations

import pytest
from cairn.search.analyzer import analyze
from cairn.search.language import written_in
from cairn.search.relevance import named_terms, never_discussed

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Onde guardamos as credenciais do banco de dados de produção?", "pt"),
        ("¿Dónde guardamos las credenciales de la base de datos de producción?", "es"),
        ("Wie haben wir die Datenbankmigrationen für die Produktionsumgebung eingerichtet?", "de"),
        ("Comment avons-nous configuré le déploiement continu pour la branche principale ?", "fr"),
        ("Quali comandi usiamo per eseguire i test di integrazione in locale?", "it"),
        ("Hoe hebben we de afhankelijkheden van het project bijgewerkt?", "nl"),
        ("Which linter runs the naming check in our golangci config?", "en"),
    ],
)
def test_a_question_is_read_in_the_language_it_is_written_in(question, language):
    assert written_in(question) == language


@pytest.mark.parametrize("keywords", ["dependabot config", "autovacuum settings", "WAL shard flush", ""])
def test_a_short_run_of_identifiers_is_no_language_and_stays_english(keywords):
    assert written_in(keywords) is None


def test_in_another_language_its_own_words_are_no_names_a_store_must_hold():
    # the store speaks of the feature in other forms of the same words: nothing the question names is absent
    pool = [set(analyze("A sincronização com a nuvem foi removida: o recurso não é oferecido no plano Pro"))]
    question = "Podemos anunciar a sincronização na nuvem como vantagem do plano Pro?"
    assert never_discussed(question, pool) == []
    # read as English, "anunciar" and "vantagem" would have been names no memory holds
    assert named_terms(question) == ["pro"]


def test_a_name_by_its_shape_still_counts_in_another_language():
    # "configuramos" and "identificador" are Portuguese, not names; the CamelCase one is
    pool = [set(analyze("Os pagamentos usam o StoreKit e o plano Pro"))]
    question = "Onde configuramos o identificador do comerciante para o PKPaymentRequest?"
    assert never_discussed(question, pool) == ["pkpaymentrequest"]


def test_in_a_language_that_capitalises_its_nouns_a_capital_letter_names_nothing():
    pool = [set(analyze("Die Migrationen laufen beim Deploy in der Produktion"))]
    question = "Wie haben wir die Datenbankmigrationen für die Produktionsumgebung eingerichtet?"
    assert never_discussed(question, pool) == []
    # a name's other shapes still name it: CamelCase, acronyms, versions
    assert never_discussed("Wie haben wir PagerDuty für die Produktion eingerichtet?", pool) == ["pagerduti"]


def test_an_english_question_keeps_its_rare_lowercase_words_as_names():
    pool = [set(analyze("We added an index on the markers table"))]
    assert never_discussed("What autovacuum settings did we tune on the markers table?", pool) == [
        "autovacuum"
    ]


def test_words_are_counted_in_a_script_written_without_spaces_by_its_letters():
    from cairn.domain.text import word_count

    assert word_count("Use the read replica for reports") == 6
    assert word_count("集計には必ず読み取り専用のレプリカを使います。") == 11  # one run, no spaces
    assert word_count("テスト") == 1 and word_count("") == 0


def test_a_tool_s_json_escaped_letters_are_read_as_letters_and_its_escaped_quotes_stay():
    from cairn.pipeline.reading.steps import strip_headers

    word = "".join(f"\\u{ord(c):04x}" for c in "Локальный")
    escaped = '{"body": "' + word + ' \\u0022x\\u0022 \\ud83d\\ude00"}'
    assert strip_headers(escaped) == '{"body": "Локальный \\u0022x\\u0022 😀"}'


def test_a_json_field_holding_json_has_its_doubly_escaped_letters_read_as_letters():
    import json

    from cairn.pipeline.reading.steps import strip_headers

    inner = json.dumps({"notice": "Дибаг хийхийн тулд (7)"})  # ensure_ascii: \u0414…
    outer = json.dumps({"key": "OPS-7", "description": inner})  # each escape's backslash escaped again
    read = strip_headers(outer)
    assert "Дибаг хийхийн" in read and "\\Д" not in read
    assert json.loads(json.loads(read)["description"]) == {"notice": "Дибаг хийхийн тулд (7)"}


def test_a_question_s_function_words_in_its_language_do_not_choose_the_snippet():
    from cairn.search.language import content_terms
    from cairn.search.snippets import snippet

    question = "Qual é a URL base da API do CMS que o app usa para os treinos e os dados dos personais?"
    assert {"que", "para", "o"}.isdisjoint(content_terms(question))
    assert {"url", "cms", "treino"} <= set(content_terms(question))
    text = (
        "user: Usa o Firebase UID do app, ou tem usuários próprios? É o que o app usa hoje para o login.\n"
        "agent thinking: The CMS base URL is https://cms.example.invalid, the app reads workouts from it.\n"
        "agent: Done."
    )
    assert "cms.example.invalid" in snippet(text, question, budget=120)
    # an English question keeps what the analyzer keeps
    assert content_terms("Which CMS base URL does the app use?") == ["cms", "base", "url", "app", "use"]


def test_a_question_too_short_to_tell_is_read_in_the_language_of_its_candidates():
    pool = [set(analyze("Der Hotfix für den Login muss heute noch raus, bitte direkt über die Pipeline."))]
    question = "Login-Hotfix ausrollen"
    assert written_in(question) is None
    assert never_discussed(question, pool) == ["ausrollen"]  # read as English: a name no memory holds
    assert never_discussed(question, pool, pool_language="de") == []


def test_the_written_out_combining_marks_are_marks_and_cover_the_scripts_that_use_them():
    import re
    import unicodedata

    from cairn.domain.text import MARK

    mark = re.compile(MARK)
    listed = [c for c in range(0x300, 0x10000) if mark.fullmatch(chr(c))]
    assert all(unicodedata.category(chr(c)).startswith("M") for c in listed)
    # Latin's combining accents, Hebrew, Arabic, the Indic scripts, Thai, Lao, Tibetan, Myanmar, Khmer
    spans = [(0x300, 0x36F), (0x591, 0x5C7), (0x610, 0x6ED), (0x900, 0xDFF), (0xE31, 0xF87), (0x102B, 0x17DD)]
    wanted = [c for a, b in spans for c in range(a, b + 1) if unicodedata.category(chr(c)).startswith("M")]
    assert set(wanted) <= set(listed)

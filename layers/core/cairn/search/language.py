"""Which language a short text is written in, when that is clear.

People ask Cairn in their own language. Some of what recall reads off a question is a fact of English
only: a lowercase word that general English never uses names a specific thing (`search.vocabulary`),
and a capitalised word inside a sentence is a name. In a Portuguese question most words are not English
("Quais builds já subimos…?"), and in a German one every noun is capitalised; read as English, each
such word is a name no memory mentions, and a question the store can answer is taken for one it never
discussed.

py3langid (a maintained fork of langid.py: a naive Bayes model over byte n-grams of 140 languages,
shipped in its wheel, about 0.1 ms a question) says which language. It is only trusted when it is sure:
a short run of identifiers ("dependabot config", "WAL shard flush") reads as anything, so a text is in
another language than English when the model gives that language at least CONFIDENT of the probability,
or LEANING where the text also uses that language's function words and no English stop word.

A question in another language also carries that language's function words ("o", "de", "que"): the
analyzer drops English's, and `content_terms` drops the others' (`data/function_words.json`: each
language's hundred most frequent words, from wordfreq), so they do not choose what a snippet shows.
"""

from __future__ import annotations

import json
import re
import threading
from functools import cache, lru_cache
from pathlib import Path

from cairn.search.analyzer import STOP_WORDS, analyze, query_terms

ENGLISH = "en"
# an English-based creole the model knows (Nigerian Pidgin): short English questions ("What setback did
# Melanie face in October 2023?") are sometimes given to it
_ENGLISH_AS_WELL = frozenset({"pcm"})
NO_LANGUAGE = "zxx"  # the model's label for text of no language (code, numbers)
# What the model must give a language other than English before a text is read as written in it. On the
# dev questions no English one reaches it for another language (their lowest English share is 0.6) and
# the Portuguese ones that name words only Portuguese has all do (0.64-0.89).
CONFIDENT = 0.5
# ... or at least this, for a short text that uses the language's function words and no English one
LEANING = 0.2
# Languages whose spelling capitalises every noun: there a capital letter marks no name.
CAPITALISES_NOUNS = frozenset({"de", "lb"})

_FUNCTION_WORDS = Path(__file__).with_name("data") / "function_words.json"
# the model's codes where wordfreq's lists name the language otherwise
_LIST_OF = {"no": "nb", "nn": "nb", "hr": "sh", "sr": "sh", "bs": "sh", "tl": "fil"}

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")

_lock = threading.Lock()
_identifier = None


def load() -> None:
    """Read the model now (~0.7 s, once per process), ahead of the first question that needs it."""
    _model()


def _model():
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _identifier


@lru_cache(maxsize=4096)  # a query is judged whole and part by part, and prompts repeat
def written_in(text: str) -> str | None:
    """The ISO 639-1 code of the language `text` is written in when that is clear, else None: the model
    is sure of it, or it leans to a language (LEANING) whose function words the text uses where it uses
    no English one ("arreglar conexión de staging con pagos": "de", "con")."""
    if not text or not text.strip():
        return None
    language, probability = _model().classify(text)
    language = ENGLISH if language in _ENGLISH_AS_WELL else str(language)
    if language == NO_LANGUAGE:
        return None
    if probability >= CONFIDENT or language == ENGLISH:
        return language if probability >= CONFIDENT else None
    if probability >= LEANING:
        words = set(_WORD.findall(text.lower()))
        if set(analyze(text)) & function_terms(language) and not words & STOP_WORDS:
            return language
    return None


@cache
def _function_words() -> dict[str, list[str]]:
    return json.loads(_FUNCTION_WORDS.read_text(encoding="utf-8"))


@cache
def function_terms(language: str) -> frozenset[str]:
    """The analyzer's terms for a language's function words; empty for English (the analyzer drops its
    stop words itself) and for a language with no list."""
    words = _function_words().get(_LIST_OF.get(language, language), [])
    return frozenset(t for w in words for t in analyze(w))


def content_terms(query: str) -> list[str]:
    """`query_terms` of `query` without the function words of the language it is written in."""
    terms = query_terms(query)
    language = written_in(query)
    if language is None or language == ENGLISH:
        return terms
    function = function_terms(language)
    return [t for t in terms if t not in function]

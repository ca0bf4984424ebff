"""Which language a short text is written in, when that is clear.

People ask Cairn in their own language. Some of what recall reads off a question is a fact of English
only: a lowercase word that general English never uses names a specific thing (`search.vocabulary`),
and a capitalised word inside a sentence is a name. In a Portuguese question most words are not English
("Quais builds já subimos…?"), and in a German one every noun is capitalised; read as English, each
such word is a name no memory mentions, and a question the store can answer is taken for one it never
discussed.

py3langid (a maintained fork of langid.py: a naive Bayes model over byte n-grams of 97 languages, shipped
in its wheel, about 0.1 ms a question) says which language. It is only trusted when it is sure: a short
run of identifiers ("dependabot config", "WAL shard flush") reads as anything, so a text is another
language than English only when the model gives that language at least CONFIDENT of the probability.
"""

from __future__ import annotations

import threading
from functools import lru_cache

ENGLISH = "en"
# What the model must give a language other than English before a text is read as written in it. On the
# dev questions no English one reaches it for another language (their lowest English share is 0.6) and
# the Portuguese ones that name words only Portuguese has all do (0.64-0.89).
CONFIDENT = 0.5
# Languages whose spelling capitalises every noun: there a capital letter marks no name.
CAPITALISES_NOUNS = frozenset({"de", "lb"})

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
    """The ISO 639-1 code of the language `text` is written in when the model is sure of it, else None."""
    if not text or not text.strip():
        return None
    language, probability = _model().classify(text)
    return str(language) if probability >= CONFIDENT else None


def reads_as_english(text: str) -> bool:
    """True unless `text` is surely in another language: an unsure reading stays English, as before."""
    return written_in(text) in (None, ENGLISH)

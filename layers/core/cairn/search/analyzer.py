"""The English text analyzer: text in, index terms out, identical for documents and queries.

A script written without spaces (Chinese, Japanese, Thai…) is read as overlapping pairs of letters, as a
CJK index reads it: its words have no bounds to split at. A combining mark belongs to its word.

Case and Unicode forms are folded and diacritics removed, code identifiers are split into their words
(and kept whole too, so an exact identifier still matches best), stop words are dropped and the rest is
reduced with the Snowball English stemmer. The output is plain ASCII-or-letter words joined by spaces,
so any engine's whitespace tokenizer reads it back unchanged; `fts5_match_query` turns a query into an
FTS5 expression that can never be a syntax error, whatever the user typed.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable

import Stemmer

from cairn.domain.text import MARK, UNSPACED

# The Snowball English stop list plus the contractions it spells without apostrophes: questions
# ("what did ... do?") are mostly made of these, and they only add noise to BM25.
_STOP_LIST = """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can cannot could couldn't did didn't do does doesn't doing don't down during each few
    for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
    him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's will with won't would wouldn't you you'd you'll you're you've your
    yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_LIST.split())

# Words of letters or digits; an apostrophe inside a word is kept so contractions meet the stop list.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
# The same with the combining marks a folded text keeps (a Hindi or Thai word's vowel signs: Python's \w
# knows no mark, and a word fell apart at each), for text that is not ASCII
_WORD_ANY = re.compile(rf"(?:[^\W_]|{MARK})+(?:'(?:[^\W_]|{MARK})+)*")
# a run of a script written without spaces (Chinese, Japanese, Thai…), or a run of anything else in a word
_SEGMENT = re.compile(rf"({UNSPACED.pattern}+)|((?:(?!{UNSPACED.pattern}).)+)")
# A word with a lower-to-upper step (parseHttp) or capitals running into lower case (HTTPServer)
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_IDENTIFIER = re.compile(r"\b[^\W_]*(?:[a-z0-9][A-Z]|[A-Z]{2}[a-z])[^\W_]*")
# Boundaries inside identifiers: fooBar, HTTPServer, utf8Decode
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
_POSSESSIVE = re.compile(r"'s\b")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
# Stems longer than this are identifiers or garbage; truncating keeps pathological input bounded.
_MAX_TERM = 64

_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    # PyStemmer objects are not thread-safe; one per thread keeps its memo cache useful.
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def _fold(text: str) -> str:
    if text.isascii():  # the common case; NFKD and the per-character scan cost more than all the rest
        return text.replace("`", "'")
    decomposed = unicodedata.normalize("NFKD", text.translate(_APOSTROPHES))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    """Lower-cased words; an identifier such as `parseHttpURL` also gives its parts.

    Whole-text regexes rather than a loop over words: this runs over every pooled memory on each
    recall, and per-word Python calls were most of the analyzer's time.
    """
    folded = _fold(text)
    lowered = _POSSESSIVE.sub("", folded.lower())
    if folded.isascii():
        words = _WORD.findall(lowered)
    elif UNSPACED.search(lowered):
        words = [piece for word in _WORD_ANY.findall(lowered) for piece in _pieces(word)]
    else:
        words = _WORD_ANY.findall(lowered)
    if _INNER_CAPITAL.search(folded):
        for identifier in _IDENTIFIER.findall(folded):
            words.extend(part.lower() for part in _CAMEL.findall(identifier))
    return words


def _pieces(word: str) -> list[str]:
    """A word with a run of a script written without spaces in it, as an index reads such a run: its
    overlapping pairs of letters (a CJK index's bigrams; a lone letter stands for itself), and what is
    between such runs as words of its own ("本番dbの設定" is 本番, db, の設, 設定)."""
    if not UNSPACED.search(word):
        return [word]
    out: list[str] = []
    for run, rest in _SEGMENT.findall(word):
        if rest:
            out.append(rest)
        elif len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def analyze(text: str) -> list[str]:
    """Index terms of `text`, in order, duplicates kept (term frequency matters to BM25)."""
    kept = [w.replace("'", "") for w in _words(text) if w not in STOP_WORDS]
    kept = [w[:_MAX_TERM] for w in kept if w]
    return _stemmer().stemWords(kept) if kept else []


def analyzed_text(text: str) -> str:
    """What an engine indexes for `text`: its terms joined by single spaces."""
    return " ".join(analyze(text))


def query_terms(text: str, max_terms: int = 64) -> list[str]:
    """Distinct terms of a query in first-seen order, capped so a pasted essay stays a cheap query."""
    return list(dict.fromkeys(analyze(text)))[:max_terms]


def fts5_match_query(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression OR-ing the terms; each is a quoted string, so nothing is an operator."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)

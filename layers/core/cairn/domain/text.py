"""Words counted in any script.

Many of Cairn's tests count words: a request of three words or more says something, a line of six words
or more is someone's prose. Spaces bound words in most scripts, but not in Chinese, Japanese, Thai, Lao,
Myanmar or Khmer, where a sentence is one run of letters ("本番データベースには直接接続しないでください");
counted by spaces it is a word, and a person's rule in Japanese reads as a fragment. In those scripts a
run's words are counted by its letters, about two a word (the mean length of a Chinese or Japanese word).
"""

from __future__ import annotations

import re

# Hiragana, Katakana, CJK ideographs (and their extensions and compatibility forms), Thai, Lao, Myanmar, Khmer
UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"
)
UNSPACED_LETTERS_PER_WORD = 2


def token_words(token: str) -> int:
    """How many words one token between spaces holds: one, or more in a script written without spaces."""
    unspaced = len(UNSPACED.findall(token))
    return max(1, unspaced // UNSPACED_LETTERS_PER_WORD) if unspaced else 1


def word_count(text: str) -> int:
    """The words of `text` in any script."""
    return sum(token_words(token) for token in (text or "").split())

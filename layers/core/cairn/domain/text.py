"""Words counted in any script.

Many of Cairn's tests count words: a request of three words or more says something, a line of six words
or more is someone's prose. Spaces bound words in most scripts, but not in Chinese, Japanese, Thai, Lao,
Myanmar or Khmer, where a sentence is one run of letters ("本番データベースには直接接続しないでください");
counted by spaces it is a word, and a person's rule in Japanese reads as a fragment. In those scripts a
run's words are counted by its letters, about two a word (the mean length of a Chinese or Japanese word).

Python's `\\w` knows no combining mark: a Hindi word's vowel signs (चलाएँ) or an Arabic word's short
vowels are not word characters to it, and such a word falls apart into pieces. `LETTER` is a letter or a
mark, for patterns that must read whole words in every script; `FULL_STOPS` end a sentence with no space
after them (the CJK full stops, the Devanagari danda, the Arabic and Urdu stops).
"""

from __future__ import annotations

import re
import unicodedata

# Hiragana, Katakana, CJK ideographs (and their extensions and compatibility forms), Thai, Lao, Myanmar, Khmer
UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"
)
UNSPACED_LETTERS_PER_WORD = 2


def _marks() -> str:
    """The combining marks of the Basic Multilingual Plane as a character class's ranges."""
    points = [c for c in range(0x300, 0x10000) if unicodedata.category(chr(c)).startswith("M")]
    ranges: list[tuple[int, int]] = []
    for c in points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


MARK = f"[{_marks()}]"
LETTER = rf"(?:[^\W\d_]|{MARK})"  # a letter, or a mark that belongs to the letter before it
FULL_STOPS = "。！？।॥؟۔։።။។"


def token_words(token: str) -> int:
    """How many words one token between spaces holds: one, or more in a script written without spaces."""
    unspaced = len(UNSPACED.findall(token))
    return max(1, unspaced // UNSPACED_LETTERS_PER_WORD) if unspaced else 1


def word_count(text: str) -> int:
    """The words of `text` in any script."""
    return sum(token_words(token) for token in (text or "").split())

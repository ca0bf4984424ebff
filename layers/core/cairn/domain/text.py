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

# Hiragana, Katakana, CJK ideographs (and their extensions and compatibility forms), Thai, Lao, Myanmar, Khmer
UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"
)
UNSPACED_LETTERS_PER_WORD = 2


# The combining marks of the Basic Multilingual Plane (Unicode 14.0.0), as ranges of code points: written
# out rather than scanned for at import, which cost every cold start ~20 ms (a unit test checks them).
_MARK_RANGES = """
0300-036f 0483-0489 0591-05bd 05bf 05c1-05c2 05c4-05c5 05c7 0610-061a 064b-065f 0670 06d6-06dc
06df-06e4 06e7-06e8 06ea-06ed 0711 0730-074a 07a6-07b0 07eb-07f3 07fd 0816-0819 081b-0823 0825-0827
0829-082d 0859-085b 0898-089f 08ca-08e1 08e3-0903 093a-093c 093e-094f 0951-0957 0962-0963 0981-0983
09bc 09be-09c4 09c7-09c8 09cb-09cd 09d7 09e2-09e3 09fe 0a01-0a03 0a3c 0a3e-0a42 0a47-0a48 0a4b-0a4d
0a51 0a70-0a71 0a75 0a81-0a83 0abc 0abe-0ac5 0ac7-0ac9 0acb-0acd 0ae2-0ae3 0afa-0aff 0b01-0b03 0b3c
0b3e-0b44 0b47-0b48 0b4b-0b4d 0b55-0b57 0b62-0b63 0b82 0bbe-0bc2 0bc6-0bc8 0bca-0bcd 0bd7 0c00-0c04
0c3c 0c3e-0c44 0c46-0c48 0c4a-0c4d 0c55-0c56 0c62-0c63 0c81-0c83 0cbc 0cbe-0cc4 0cc6-0cc8 0cca-0ccd
0cd5-0cd6 0ce2-0ce3 0d00-0d03 0d3b-0d3c 0d3e-0d44 0d46-0d48 0d4a-0d4d 0d57 0d62-0d63 0d81-0d83 0dca
0dcf-0dd4 0dd6 0dd8-0ddf 0df2-0df3 0e31 0e34-0e3a 0e47-0e4e 0eb1 0eb4-0ebc 0ec8-0ecd 0f18-0f19 0f35
0f37 0f39 0f3e-0f3f 0f71-0f84 0f86-0f87 0f8d-0f97 0f99-0fbc 0fc6 102b-103e 1056-1059 105e-1060
1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109d 135d-135f 1712-1715 1732-1734 1752-1753
1772-1773 17b4-17d3 17dd 180b-180d 180f 1885-1886 18a9 1920-192b 1930-193b 1a17-1a1b 1a55-1a5e
1a60-1a7c 1a7f 1ab0-1ace 1b00-1b04 1b34-1b44 1b6b-1b73 1b80-1b82 1ba1-1bad 1be6-1bf3 1c24-1c37
1cd0-1cd2 1cd4-1ce8 1ced 1cf4 1cf7-1cf9 1dc0-1dff 20d0-20f0 2cef-2cf1 2d7f 2de0-2dff 302a-302f
3099-309a a66f-a672 a674-a67d a69e-a69f a6f0-a6f1 a802 a806 a80b a823-a827 a82c a880-a881 a8b4-a8c5
a8e0-a8f1 a8ff a926-a92d a947-a953 a980-a983 a9b3-a9c0 a9e5 aa29-aa36 aa43 aa4c-aa4d aa7b-aa7d aab0
aab2-aab4 aab7-aab8 aabe-aabf aac1 aaeb-aaef aaf5-aaf6 abe3-abea abec-abed fb1e fe00-fe0f fe20-fe2f
"""


def _marks() -> str:
    """`_MARK_RANGES` as a character class's ranges."""
    return "".join("-".join(f"\\u{part}" for part in item.split("-")) for item in _MARK_RANGES.split())


MARK = f"[{_marks()}]"
LETTER = rf"(?:[^\W\d_]|{MARK})"  # a letter, or a mark that belongs to the letter before it
FULL_STOPS = "。！？।॥؟۔։።။។"


def word_pattern(min_letters: int) -> str:
    """A regex for one word in any script: `min_letters` letters or more (a mark belongs to its letter),
    or up to `UNSPACED_LETTERS_PER_WORD` letters of a script written without spaces."""
    unspaced = UNSPACED.pattern
    return rf"{unspaced}{{1,{UNSPACED_LETTERS_PER_WORD}}}|(?:(?!{unspaced}){LETTER}){{{min_letters},}}"


def token_words(token: str) -> int:
    """How many words one token between spaces holds: one, or more in a script written without spaces."""
    unspaced = len(UNSPACED.findall(token))
    return max(1, unspaced // UNSPACED_LETTERS_PER_WORD) if unspaced else 1


def word_count(text: str) -> int:
    """The words of `text` in any script."""
    return sum(token_words(token) for token in (text or "").split())

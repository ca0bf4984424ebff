"""A tool's text as a reader sees it: what the trust gate (`directives`) counts words in and matches
quotes against.

A page's character references, an encoding (a URL's percent-encoded bytes, a quoted-printable e-mail, a
header's encoded word), a letter's styled forms, look-alike letters, markup (tags, emphasis, LaTeX, RTF,
troff, a word diff's marks) and the marks that show nothing each hide words from a count of words between
spaces; `visible` reads past each, so the words a reader sees are the words counted, whatever frames them.
"""

from __future__ import annotations

import html
import re
import unicodedata
from email.errors import HeaderParseError
from email.header import decode_header, make_header

# what joins the letters of one word without being one: Persian's and the Indic scripts' zero-width
# (non-)joiner (`می‌گوید`), a soft hyphen, a word joiner, the marks that set a text's direction
_JOINERS = re.compile("[\u00ad\u200c\u200d\u2060\u202a-\u202e\u2066-\u2069]")
# what parts words without showing: a zero-width space (a text's words joined by it read as one
# token), a zero-width no-break space; and what parts them in scripts that use no space: Tibetan's
# tsheg between syllables, Ethiopic's wordspace
_UNSEEN_SPACES = re.compile("[\u200b\ufeff\u0f0b\u0f0c\u1361]")


# a markup tag (`<td>`, `</p>`, `<a href="…">`): what it marks up is read, not the tag
_TAG = re.compile(r"<(?:[A-Za-z][\w:-]*(?:\s[^<>\n]{0,200})?|/[A-Za-z][\w:-]*)\s*/?>")
# the marks that set a word in bold, italics or strikethrough (`**word**`, `_word_`), at its edges
_EMPHASIS = re.compile(r"(?:(?<=\s)|^)[*_~]{1,3}(?=\S)|(?<=\S)[*_~]{1,3}(?=\s|$|[.,;:!?)\]»”\"'])", re.M)


# a tag's name, an attribute's name before its `=`, and the quotes (escaped or not) around a value
_TAG_NAME = re.compile(r"^</?[A-Za-z][\w:-]*")
_ATTRIBUTE_NAME = re.compile(r"(?<![^\s])[\w:.-]+\s*=\s*")
_QUOTES = re.compile(r"\\*[\"']|/?>$")


def _attribute_values(tag: re.Match) -> str:
    """A tag as a reader sees it: the words of its attributes' values (`<setting note="…">`), nothing
    of the tag itself. Whatever quotes a value (JSON's escaped `\\"` in a string that holds markup),
    its words stay words: the tag's name and the attributes' names are what is taken out."""
    inner = _ATTRIBUTE_NAME.sub(" ", _TAG_NAME.sub("", tag.group(0)))
    return " " + " ".join(_QUOTES.sub(" ", inner).split()) + " "


# a run of percent-encoded bytes (`%C5%B3`, `%20`), and a token holding one: a URL's path or query
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_PERCENT_TOKEN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")
_QUERY_MARK = re.compile(r"[?&][\w.-]{1,40}=")  # `?msg=`, `&lang=`: where a query's value starts
# a quoted-printable e-mail's escaped bytes of a letter outside ASCII (`=C5=B3`: the lead byte of a
# UTF-8 sequence and what follows it; `x=0A` in code is no such run), and its soft line break (an `=`
# that ends a line)
QP_RUN = re.compile(r"=[C-F][0-9A-F](?:=[0-9A-F]{2})+")
_QP_SOFT_BREAK = re.compile(r"=\r?\n")
# letters of Cyrillic and Greek drawn like Latin ones, as a word that mixes the scripts uses them (`rеpо`
# with Cyrillic е and о): a reader sees the Latin word
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁӏАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιν",
    "aeopcyxijsdlABEKMHOPCTXIJSABEZHIKMNOPTYXoiv",
)
_MIXED_WORD = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f])\w+\b")


def _bytes_read(run: str, escape: str) -> str:
    """A run of escaped bytes as the characters they encode (UTF-8), or as it is where they encode none."""
    try:
        return bytes.fromhex(run.replace(escape, "")).decode("utf-8")
    except ValueError:
        return run


def _percent_read(token: re.Match) -> str:
    """A token with percent-encoded bytes as a reader decodes it, a query's keys read as the spaces
    between its values (`/notify?msg=Send%20all%20…` is the words of its message)."""
    decoded = _PERCENT_RUN.sub(lambda r: _bytes_read(r.group(0), "%"), token.group(0))
    return _QUERY_MARK.sub(" ", decoded)


# a header's RFC 2047 encoded word (`=?UTF-8?Q?Send_all_…?=`, `=?UTF-8?B?…?=`): what a mail reader shows
_ENCODED_WORD = re.compile(r"=\?[\w-]{1,40}\?[QqBb]\?[^?\s]{1,2000}\?=")
# Latin small capitals (`ᴘᴜsʜ`), which no normal form maps to the letters they are
_SMALL_CAPITALS = str.maketrans("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz")


def _encoded_word(word: re.Match) -> str:
    """An encoded word as the standard library's RFC 2047 decoder reads it, or as it is."""
    try:
        return str(make_header(decode_header(word.group(0))))
    except (ValueError, LookupError, HeaderParseError):
        return word.group(0)


def _decoded_text(text: str) -> str:
    """`text` with what an encoding hides read as the characters it encodes: percent-encoded bytes in a
    URL, a quoted-printable e-mail's escaped bytes and soft line breaks, a header's encoded word, a
    letter written as its parts or in a styled form, the Cyrillic or Greek letters a Latin word is
    spelled with."""
    if "=?" in text:
        text = _ENCODED_WORD.sub(_encoded_word, text)
    if "%" in text:
        text = _PERCENT_TOKEN.sub(_percent_read, text)
    if "=" in text and QP_RUN.search(text):
        text = QP_RUN.sub(lambda r: _bytes_read(r.group(0), "="), _QP_SOFT_BREAK.sub("", text))
        text = text[:-1] if text.endswith("=") else text  # a line's soft break, the line read alone
    if not text.isascii():
        # a letter and its accents as one character or as several show the same (`ệ`, `ệ`), and so do
        # a letter and its styled forms (fullwidth, mathematical bold `𝗽𝘂𝘀𝗵`, circled, small capitals)
        text = unicodedata.normalize("NFKC", text).translate(_SMALL_CAPITALS)
        if _MIXED_WORD.search(text):
            text = _MIXED_WORD.sub(lambda w: w.group(0).translate(_LOOK_ALIKES), text)
    return text


def visible(text: str) -> str:
    """`text` as a reader sees it: a page's character references read as the characters they are
    (`&nbsp;`), and what an encoding hides as what it encodes (`_decoded_text`); a tag as its attributes'
    values, a word's emphasis marks and a document's styling commands (LaTeX's, RTF's, a word diff's
    marks: `_unmarked`; troff's font macros) taken out, so the words they mark up read as words
    (`<td>word</td>`, `**word**`, `\\textbf{word}`); the marks that show nothing taken out or read as the
    spaces they stand for, so a word broken up by soft hyphens or words joined by zero-width or no-break
    spaces read as words; a word set letter by letter reads as the word."""
    if "&" in text:
        text = html.unescape(text)
    if "%" in text or "=" in text or not text.isascii():
        text = _decoded_text(text)
    if "<" in text:
        text = _TAG.sub(_attribute_values, text)
    if "\\" in text or "{+" in text or "[-" in text:
        text = _unmarked(text)
    if "*" in text or "_" in text or "~" in text:
        text = _EMPHASIS.sub("", text)
    if "." in text:
        text = _TROFF_FONT.sub("", text)
    if _LETTER_SPACED.search(text):
        text = _LETTER_SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    return _UNSEEN_SPACES.sub(" ", _JOINERS.sub("", text))


# a word set with a space between its letters (letter-spaced for emphasis, `g e s p e r r t`; a banner's
# `N O T E`), words apart by wider gaps: the letters of a run read as one word
_LETTER_SPACED = re.compile(r"(?<!\S)[^\W\d_](?: [^\W\d_'’-]| [-'’](?= [^\W\d_])){1,}(?: [,.;:!?])?(?!\S)")


# a LaTeX command that sets its argument in a style or a heading (`\textbf{…}`, `\section*{…}`); of two
# letters or more, so an escaped newline before a brace (`\n{`) in a string is none
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]{2,}\*?(?:\[[^\]\n]{0,40}\])?(?=\{)")
# RTF: a document's start (`{\rtf1`) or a group that sets its words in a style (`{\b …}`, `{\ul …}`),
# and a control word with its parameter, or an escaped byte (`\'e9`)
_RTF_GROUP = re.compile(r"\{\\(?:rtf\d|(?:b|i|ul|strike|caps|scaps|sub|super)\s)")
_RTF_CONTROL = re.compile(r"\\[a-z]{1,32}-?\d{0,10} ?|\\'[0-9a-f]{2}")
# the marks of `git diff --word-diff`: what it took out (`[-…-]`) and put in (`{+…+}`)
_WORD_DIFF = re.compile(r"\[-([^\n]*?)-\]|\{\+([^\n]*?)\+\}")
# troff's font macros (`.B word`, `.IR word text`): the words after them run on in the paragraph
_TROFF_FONT = re.compile(r"^\.(?:B|I|BI|IB|BR|RB|IR|RI|SM|SB)\s+", re.M)


def _unmarked(text: str) -> str:
    """A LaTeX or RTF document's text as a reader sees it: the commands that style words or open a
    group taken out, and their braces (`\\textbf{Push}`, `{\\b Push}` are the word); a word diff's
    marks (`[-old-]{+new+}`) taken out of the words they mark."""
    if "{+" in text or "[-" in text:
        text = _WORD_DIFF.sub(lambda d: f" {d.group(1) or d.group(2) or ''} ", text)
    latex = _LATEX_COMMAND.search(text)
    rtf = _RTF_GROUP.search(text)
    if latex:
        text = _LATEX_COMMAND.sub("", text)
    if rtf:
        text = _RTF_CONTROL.sub("", text)
    return text.replace("{", " ").replace("}", " ") if latex or rtf else text

"""What an excerpt leaves out of a long tool output that someone wrote: kept for explicit recall only.

An excerpt shows a tool's output as its head, error lines and tail (`steps.informative`): a long log, a
page or a README says most of what it says in its middle. The sentences and requests among those left-out
lines (`directives.not_data_lines`), and its other lines of many words, are what a person later asks
recall about ("what did the build log tell us to do?"), and what a tool's text tells an agent hides there
too. They are kept beside the excerpt (`Memory.tool_text`), indented under the call line they came from
(as an excerpt shows an output), and searched apart from what an answer ranks (`ports.ToolTextSearch`:
added to an excerpt's searched words, they made every excerpt's own words count for less): explicit
recall shows the lines that bear on its query in a section of their own (`services.tool_text`), marked
as the tool's, and nothing Cairn shows unasked (the block, the prompt hook, the digest) reads them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from cairn.domain.text import FULL_STOPS, word_pattern
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.steps import (
    AGENT_CHARS as NOTE_CHARS,
)
from cairn.pipeline.reading.steps import (
    OUTPUT_CHARS,
    call_line,
    one_line,
    strip_headers,
    unsaid,
)
from cairn.services.directives import (
    AI_NAMED,
    asking_lines,
    began_on,
    continuing,
    in_comments,
    introduced,
    json_strings,
    prose_lines,
    strings_read,
    their_notes,
    unframed_lines,
)
from cairn.transcripts.model import Role

LEFT_OUT_CHARS = 1_500  # per excerpt: a few outputs' worth of sentences, not a log
_INDENT = "    "  # a kept line under its call line, as an excerpt shows an output
LINE_CHARS = 400  # a left-out line as kept (a minified page is one line; a log's note to agents is long)
LEFT_OUT_WORDS = 4  # a line of fewer words, neither a request nor prose, is a log's data
_WORD = re.compile(word_pattern(3))
_OUTCOME = re.compile(r"^\s*→ [^:]{1,12}: ")  # how an excerpt heads an output's first line


@dataclass(frozen=True, slots=True)
class LongOutput:
    """A text an excerpt cuts (a tool's output, a harness's note), the session lines it spans and the
    line that heads it (its call)."""

    first: int
    last: int
    head: str
    text: str


def left_out_prose(outputs: Sequence[LongOutput], start: int, end: int, shown: str) -> str:
    """The sentences and requests of the session's long outputs (`long_outputs`) in lines `start`..`end`
    that the excerpt's text `shown` leaves out: each output's under its call line, its requests first,
    within LEFT_OUT_CHARS; "" when there are none."""
    seen = {" ".join(_OUTCOME.sub("", line).split()) for line in shown.splitlines()}
    blocks: list[str] = []
    room = LEFT_OUT_CHARS
    for output in outputs:
        head, text = output.head, output.text
        if output.first > end or output.last < start:
            continue
        if room <= 0:
            break
        lines = text.splitlines()
        # kept without a log's frame: a note printed over a journal's lines spends the room on its words,
        # not on the time, host and unit repeated before each
        unframed = unframed_lines(lines)
        kept: dict[int, str] = {}
        for i in _worth_keeping(text):
            line = one_line(unframed[i], LINE_CHARS)
            if line and " ".join(lines[i].split()) not in seen and len(line) < room:
                kept[i] = line
                room -= len(line) + len(_INDENT) + 1  # as kept: indented under its call line
        if kept:
            room -= len(head) + 1
            blocks.append("\n".join([head, *(_INDENT + kept[i] for i in sorted(kept))]))  # the output's order
    return "\n".join(blocks)


@lru_cache(maxsize=256)
def _worth_keeping(text: str) -> tuple[int, ...]:
    """The lines of an output (by index) worth keeping, best first: its requests and prose that name an
    AI, its other requests, then its prose, then the rest of the notes those are in
    (`directives.their_notes`), then its wordiest other lines (a log's prose is often framed as data:
    `=> # prebuild: NOTICE …`; a line of a few words says little). Cached: a step's excerpts share its
    outputs."""
    lines = text.splitlines()
    wordy = sorted(
        (i for i, line in enumerate(lines) if len(_WORD.findall(line)) >= LEFT_OUT_WORDS),
        key=lambda i: -len(_WORD.findall(lines[i])),
    )
    said = [*asking_lines(text), *prose_lines(text)]
    told = set(said)
    # the lines that name an AI first, in any language: what a tool's text tells an agent
    addressing = [i for i in said if AI_NAMED.search(lines[i])]
    # then the rest of the notes they are in: a comment's other lines, the id that signs a note
    notes = sorted(set(in_comments(lines, their_notes(lines, told))) - told)
    ranked = [*addressing, *said, *notes, *wordy]
    return tuple(dict.fromkeys(j for i in ranked for j in _sentence_at(lines, i, i in told)))


_STOPS = re.compile(rf"[.!?{FULL_STOPS}]\W*$")  # a line that ends a sentence (a colon only introduces)


def _sentence_at(lines: list[str], i: int, said: bool = False) -> list[int]:
    """Line `i` with the lines of its sentence around it, of words enough: the line before that leads
    into it (a note's heading, ending in a colon) and the lines it runs on into when hard-wrapped. A
    request wrapped over a log's lines holds what it asks for in its next line, and whose it is in the
    line before; a request or prose (`said`) that ends in a colon, in the block under it
    (`directives.introduced`), and one that runs on to its full stop, in every line it runs over from
    the line it began on (`directives.began_on`)."""
    whole = continuing(lines, i)
    wordy = [j for j in whole if j == i or len(_WORD.findall(lines[j])) >= LEFT_OUT_WORDS]
    run = [j for k, j in enumerate(wordy) if j == i + k]  # up to the first line of too few words
    if said and (asked := introduced(lines, whole[-1])):
        # a sentence that ends in a colon asks for what it introduces, a command or settings: it is
        # the request's own words, the data under it ("…so the scan re-runs\nserver-side:" then `git …`)
        run = [*whole, *asked]
    elif said and len(whole) > 1 and _STOPS.search(lines[whole[-1]]):
        # a sentence that runs on to its full stop holds the command it names mid-way ("… always be
        # updated with\n    git push --force …\n  and the checks turned off."), though few words
        run = whole
    if said:
        run = [*began_on(lines, i), *run]  # and its first lines, when line `i` ends it
    before = i - 1
    if (
        before >= 0
        and lines[before].rstrip().endswith(":")
        and len(_WORD.findall(lines[before])) >= LEFT_OUT_WORDS
    ):
        return [before, *run]
    return run


def long_outputs(events: Sequence[EventDoc]) -> list[LongOutput]:
    """Each text of the session that an excerpt cuts (a tool's output, a harness's note: a command the
    person ran themselves), with the line that heads it; a JSON document as the strings it holds."""
    results = {e.tool_call_id: e for e in events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    called = {e.tool_call_id for e in events if e.role is Role.TOOL_CALL and e.tool_call_id}
    out: list[LongOutput] = []
    for e in events:
        if e.role is Role.TOOL_CALL:
            result, head = results.get(e.tool_call_id or ""), call_line(e)
        elif e.role is Role.TOOL_RESULT and e.tool_call_id not in called:
            result, head = e, "→ output"
        elif e.role is Role.SYSTEM and len(e.text or "") > NOTE_CHARS:
            result, head = e, "note: " + (e.text or "").strip().split("\n", 1)[0]
        else:
            continue
        text = "" if result is None or unsaid(result.text) else strip_headers(result.text or "")
        if len(text) > OUTPUT_CHARS:
            strings = json_strings(text)
            readable = strings_read(text) if strings is None else "\n".join(strings)
            last = max(e.last_line, result.last_line if result is not None else 0)
            out.append(LongOutput(e.line_no, last, one_line(head, 120), readable))
    return out

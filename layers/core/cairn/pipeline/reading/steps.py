"""A session as steps a person would recognise, rendered compactly: the text of transcript excerpts.

A step is a request on the main thread and the work it caused (actions, their outcomes, the agent's
replies) up to the next request. Each step is rendered as short lines: who spoke, each command with its
exit status and the agent's own description, files touched, and tool output cut to its informative
head and tail plus any error lines. A long step is split into several excerpts of bounded size; each
names the request it serves in its title (not its text, which search reads), so an excerpt found by
search always says what it was for.

Pure functions over the parse stage's events: nothing here knows about storage or an agent's format.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from cairn.domain.models import Source, Span
from cairn.domain.text import word_pattern
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import (
    command_of,
    edited_path,
    is_edit,
    is_shell,
    new_text,
    patch_added,
    patch_text,
    written_files,
)
from cairn.services.directives import (
    QUOTED_MARKS,
    RETOLD,
    directive,
    marks,
    names_stated_value,
    passes_on_whole,
    relayed_directive,
    repeats_prose,
    restatable,
    restates_request,
)
from cairn.services.trust import classify, outside_text, written_path
from cairn.transcripts.model import Role

EXCERPT_CHARS = 1_800  # one excerpt's rendered text; about 450 tokens
AGENT_CHARS = 500  # a system note
PROSE_CHARS = 24_000  # what a person or the agent wrote is kept whole up to here (a pasted log is not prose)
OUTPUT_CHARS = 480  # a tool's output as shown: head, error lines, tail
INPUT_CHARS = 220
EDIT_CHARS = 700  # what an edit wrote: its strings and comments are often the answer later
MAX_EXCERPTS = 600  # per session: the bound on what one session stores
_EXIT = re.compile(r"(?:Process exited with code|exit(?:ed)? (?:code|status)[:=]?)\s*(-?\d+)", re.I)
_CODEX_HEADER = re.compile(r"^(Chunk ID|Wall time|Process exited with code|Original token count|Output):?.*$")
_LINE_NUMBER = re.compile(r"^\s*\d+→")  # Claude Code's Read output numbers every line
_ERROR_LINE = re.compile(
    r"\b(error|fail(?:ed|ure)?|fatal|exception|panic|traceback|not found|denied)\b", re.I
)
_WS = re.compile(r"[ \t]+")
# A line that reports one step's or test's status, as CI runners, test runners and task tools print
# them (`✓ Build`, `X Health check`, `FAIL src/a.test.ts`, `--- PASS: TestX`, `test x ... ok`)
_STATUS_LINE = re.compile(
    r"^\s*(?:[✓✔✗✘×❌✅](?=\s)|X(?=\s+[A-Z])|(?:--- )?(?:PASS|FAIL)(?:ED)?\b|ok\s+\S)"
    r"|\.\.\. (?:ok|FAILED)\s*$"
)
_FAILED_STATUS = re.compile(r"^\s*(?:[✗✘×❌]|X\s|(?:--- )?FAIL)|FAILED\s*$")
_HUNK = re.compile(r"^\s*@@ -\d")  # a unified diff's hunk header
_CHANGED = re.compile(r"^\s*[+-](?![+-]{2})\s*\S")  # a line a diff adds or removes (not +++/---)
_PLACEHOLDER = re.compile(r"\[REDACTED_[A-Z_]+[^\]]*\]")
# a word in any script (`[A-Za-z]{3,}` read a Persian, Russian or Chinese message as nothing but
# placeholders and left it out of every excerpt)
_WORDS = re.compile(word_pattern(3))
_RUN = re.compile(r"([^\w\s])\1{3,}")  # rules and box drawing (━━━━, ----) say nothing, cost tokens
MIN_CONTENT_WORDS = 2  # an excerpt of fewer of the session's own words (a fully redacted step) is dropped
OUTCOME = "\n  → "  # how a tool's outcome starts under its call (services.trust reads it back)
MAX_SOURCES = 12  # tools an excerpt's provenance names; those it must not be trusted for first


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One searchable slice of a session: rendered text and the source lines it covers."""

    index: int
    line_start: int
    line_end: int
    request: str  # the request this excerpt serves, short, for its title
    text: str
    sidechain: bool = False
    said_by: str = "agent"  # user | agent | tool | mixed: whose words the excerpt holds
    sources: tuple[Source, ...] = ()  # the tools whose output it holds
    spans: tuple[Span, ...] = ()  # who said each stretch of `text`, in order


def build_excerpts(
    events: Sequence[EventDoc],
    max_chars: int = EXCERPT_CHARS,
    cwd: str | None = None,
    own: Collection[str] = (),
) -> list[Excerpt]:
    """Steps of the session, rendered and cut into excerpts of at most `max_chars` characters each.
    `cwd`: the session's working directory, which tells the repository's files from others; `own`: files
    the session wrote that its events do not show (its sub-agents', `written_by`)."""
    results = {e.tool_call_id: e for e in events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    paired = {e.tool_call_id for e in events if e.role is Role.TOOL_CALL and e.tool_call_id}
    out: list[Excerpt] = []
    main_request = ""
    heard = Heard(cwd)
    heard.own.update(own)
    unread = unkept_reads(events, cwd, own)
    for step in _steps(events):
        request = _request_of(step)
        if step[0].role is Role.USER and not step[0].is_sidechain:
            main_request = request
        elif not step[0].is_sidechain and not request:
            request = main_request  # the main thread resuming after a sub-agent serves its request
        pieces: list[tuple[str, int, int, _Said]] = []  # rendered text, first line, last line, who said it
        words: list[int] = []
        for e in step:
            if e.role is Role.TOOL_RESULT and e.tool_call_id in paired:
                continue  # rendered with its call
            result = results.get(e.tool_call_id) if e.role is Role.TOOL_CALL else None
            text = render_event(e, result)
            if text:
                last = max(e.last_line, result.last_line if result else 0)
                # prose is never cut: a long message continues over as many pieces as it takes
                unkept = unread.get(e.seq)
                said = said_by(e, result, text, cwd, heard.before, unkept, heard.own, heard.given.gave)
                split = split_prose(text, max_chars - 160)
                if len(split) > 1 and said[1] is not None and e.role is not Role.TOOL_CALL:
                    # a long summary, report or reply: each piece is read on its own words
                    pieces.extend(
                        (p, e.line_no, last, _said_in(p, said, heard.before, unkept, heard.given.gave))
                        for p in split
                    )
                else:
                    pieces.extend((part, e.line_no, last, said) for part in split)
                words.append(content_words(e, result))
            heard.hear(e, result)
        if sum(words) < MIN_CONTENT_WORDS:
            continue
        out.extend(_pack(pieces, request, len(out), max_chars, step[0].is_sidechain))
        if len(out) >= MAX_EXCERPTS:
            return out[:MAX_EXCERPTS]
    return out


def _steps(events: Iterable[EventDoc]) -> list[list[EventDoc]]:
    """A main-thread user message starts a step (not the person's words within the request under way:
    `EventDoc.steers`); a compaction summary is a step of its own; a sub-agent's work is a step of its
    own, and the main thread resuming after it starts another."""
    steps: list[list[EventDoc]] = []
    for e in events:
        switched = bool(steps and steps[-1]) and steps[-1][-1].is_sidechain != e.is_sidechain
        starts = (e.role is Role.USER and not e.is_sidechain and not e.steers) or e.role is Role.SUMMARY
        starts = starts or switched
        if not steps or starts:
            steps.append([])
        steps[-1].append(e)
        if e.role is Role.SUMMARY:
            steps.append([])
    return [s for s in steps if s]


def _request_of(step: list[EventDoc]) -> str:
    first = step[0]
    if first.role is Role.USER:
        return "" if _is_placeholder(first.text) else one_line(first.text, 120)
    if first.role is Role.SUMMARY:
        return "session summary"
    return ""


_Said = tuple[str, Source | None]  # user | agent | tool, and the tool's source


_HARNESS_TAG = re.compile(r"^\s*<([a-z][a-z0-9_-]*)[\s>]")
_HARNESS_COMMAND = re.compile(r"<command>\s*(.*?)\s*</command>", re.S)


def said_by(
    e: EventDoc,
    result: EventDoc | None,
    rendered: str,
    cwd: str | None,
    heard: Sequence[tuple[Source, str]] = (),
    unkept: Source | None = None,
    own: Collection[str] = (),
    given: Callable[[str], bool] | None = None,
) -> _Said:
    """Whose words an event's rendering holds: a person's (a sub-agent's task is the agent's), the
    agent's, or a tool's, with the tool's source and the cue by which its output reads as instructions.
    A compaction summary, a sub-agent's own words and a notice the agent's harness wrote retell what
    tools said: a tool's text too. The agent's words that pass on an instruction of a tool's text it
    heard before (`heard`) name that tool, with the cue. A file the session wrote before (`own`) is its
    own text."""
    if e.role is Role.USER:
        return ("agent" if e.is_sidechain else "user", None)
    if (retold := retold_source(e)) is not None:
        return ("tool", replace(retold, directive=directive(e.text)))
    if e.role is Role.TOOL_RESULT:
        source = classify(e.tool_name, None)
    elif e.role is Role.TOOL_CALL and result is not None and not is_edit(e):
        command = command_of(e) if is_shell(e) else None
        source = classify(e.tool_name, e.tool_input, command=command, cwd=cwd, own=own)
    elif e.role in (Role.ASSISTANT, Role.THINKING):
        return ("agent", passed_on(e.text, heard, unkept, given))
    else:
        return ("agent", None)
    # what the tool returned: the rendering after its call line(s) (a command may span several)
    output = rendered.split(OUTCOME, 1)[1] if e.role is Role.TOOL_CALL and OUTCOME in rendered else rendered
    cue = None if source.trusted else directive(output)
    return ("tool", Source(source.tool, source.target, source.trusted, cue))


def _said_in(
    piece: str,
    said: _Said,
    heard: Sequence[tuple[Source, str]],
    unkept: Source | None = None,
    given: Callable[[str], bool] | None = None,
) -> _Said:
    """Who said a piece of a long message, and the cue of that piece's own words."""
    who, source = said
    if source is None or source.trusted:
        return said
    if who == "agent":
        return (who, passed_on(piece, heard, unkept, given))
    return (who, replace(source, directive=directive(piece)))


def retold_source(e: EventDoc) -> Source | None:
    """The source of an event whose words are neither the person's nor the agent's own, though no tool
    call returned them: a compaction summary, a sub-agent's own words, a notice the harness wrote (a
    command the person ran, a sub-agent's report, a background task's output), named by its tag."""
    if e.role is Role.SUMMARY:
        return Source("compaction summary")
    if e.is_sidechain and e.role in (Role.ASSISTANT, Role.THINKING):
        return Source("sub-agent")
    if e.role is Role.SYSTEM:
        tag = _HARNESS_TAG.match(e.text or "")
        command = _HARNESS_COMMAND.search(e.text or "")
        target = one_line(command.group(1), 160) if command else None
        return Source(tag.group(1) if tag else "harness note", target)
    return None


class Heard:
    """The untrusted tool text a session showed its agent so far, newest last: what the agent's words
    may pass on."""

    KEEP, CHARS = 24, 20_000

    def __init__(self, cwd: str | None) -> None:
        self.cwd = cwd
        self.before: list[tuple[Source, str]] = []
        self.own: set[str] = set()  # the files the session wrote so far: reading them is no outside text
        self.given = Given()  # what the person and the repository's own files said so far

    def hear(self, e: EventDoc, result: EventDoc | None = None) -> None:
        if e.role is Role.USER and not e.is_sidechain:
            self.given.add(e.seq, e.text)
            return
        wrote = set(writes(e, self.cwd))
        if e.role is Role.TOOL_CALL and result is not None:
            wrote.update(writes(result, self.cwd))
        if wrote - self.own:
            # a file the session goes on to write is its own from then on, and what it read of it before
            self.own.update(wrote)
            for source, said in self.before:
                if source.target and written_path(source.target, self.cwd) in wrote:
                    self.given.add(e.seq, said)
        if e.role is Role.TOOL_CALL and not is_edit(e):
            # a call whose result the file does not keep (Codex's web search) is still what the agent
            # read: its words about it pass that tool's text on
            source = _source_of_call(e, self.cwd, self.own)
            text = _unechoed(result.text, f"{e.text} {e.tool_input}") if result is not None else ""
            if not source.trusted:
                self.before = [*self.before[-(self.KEEP - 1) :], (source, text[: self.CHARS])]
            elif result is not None:
                self.given.add(e.seq, result.text)
            return
        if e.role is Role.TOOL_RESULT:
            source, text = classify(e.tool_name, None), e.text
        elif (retold := retold_source(e)) is not None:
            source, text = retold, e.text
        else:
            return
        if not source.trusted and text:
            self.before = [*self.before[-(self.KEEP - 1) :], (source, text[: self.CHARS])]


class Given:
    """What the person typed, the repository's own files held and the session read of a file it went on
    to write, in the session's order: a value one of them gave is the project's, whatever a tool's text
    says of it (`directives.names_stated_value`). Looked up only for a value an agent's words share with
    a tool's text: rare, so a scan."""

    def __init__(self) -> None:
        self._said: list[tuple[int, str]] = []

    def add(self, seq: int, text: str | None) -> None:
        if text:
            self._said.append((seq, text))

    def gave(self, value: str, before: int | None = None) -> bool:
        """Whether the person or a file of the repository gave `value` (before event `before`)."""
        return any(value in text for seq, text in self._said if before is None or seq < before)


ECHOED_SHARE = 0.8  # of an output line's words, the share the call holds when the line echoes it


@lru_cache(maxsize=512)
def _unechoed(output: str, call: str) -> str:
    """`output` without the lines that echo what the agent wrote in its call (a commit's subject, a
    file it wrote, a message it posted): those are the agent's own words, not the tool's."""
    written = set(_ECHO_WORD.findall(call.casefold()))
    if not written:
        return output
    kept = []
    for line in output.splitlines():
        words = _ECHO_WORD.findall(line.casefold())
        if len(words) < 3 or sum(w in written for w in words) < ECHOED_SHARE * len(words):
            kept.append(line)
    return "\n".join(kept)


_ECHO_WORD = re.compile(r"[^\W\d_]{3,}")


def _source_of_call(e: EventDoc, cwd: str | None, own: Collection[str] = ()) -> Source:
    command = command_of(e) if is_shell(e) else None
    return classify(e.tool_name, e.tool_input, command=command, cwd=cwd, own=own)


# where Claude Code puts a tool's output too large to show ("<persisted-output> Output too large (67.6KB).
# Full output saved to: /Users/x/.claude/…"): reading it back is reading that tool's output again
_PERSISTED = re.compile(r"<persisted-output>.*?saved to:\s*(\S+)", re.S)


def written_by(calls: Iterable[EventDoc], cwd: str | None) -> frozenset[str]:
    """The files `calls` wrote (a sub-agent's, kept apart from the session's events): read back, they are
    the session's own text."""
    return frozenset(f for e in calls for f in writes(e, cwd))


def writes(e: EventDoc, cwd: str | None) -> list[str]:
    """The files a tool call writes, or a harness saved a tool's output to, as `trust.classify` compares
    them (`trust.written_path`): read back, they are the session's own text."""
    if e.role is Role.TOOL_RESULT:
        return [written_path(f, cwd) for f in _PERSISTED.findall((e.text or "")[:2000])]
    return [written_path(f, cwd) for f in written_files(e)]


def unkept_reads(events: Sequence[EventDoc], cwd: str | None, own: Collection[str] = ()) -> dict[int, Source]:
    """In a file that keeps no tool's result at all (Cursor's), the agent's messages (by `seq`) that come
    right after it read an outside text (a page, a search, another MCP server, a file outside the
    repository; its thinking aside), with that text's source. Nothing can show that such words are
    not that text's, so they are taken as passing it on (`passed_on`). `own`: files the session wrote
    that `events` do not show."""
    if any(x.role is Role.TOOL_RESULT for x in events):
        # a file that keeps tools' results keeps the texts worth reading (Codex drops only a web
        # search's, whose next message is as often the agent's own next step): its words are read
        # against what it kept (`passed_on`)
        return {}
    out: dict[int, Source] = {}
    read: Source | None = None
    written = set(own)
    for x in events:
        if x.role is Role.THINKING:
            continue
        if read is not None and x.role is Role.ASSISTANT:
            out[x.seq] = read
        read = None
        if x.role is Role.TOOL_CALL:
            written.update(writes(x, cwd))
        if x.role is Role.TOOL_CALL and not is_edit(x):
            source = _source_of_call(x, cwd, written)
            read = source if outside_text(source) else None
    return out


def passed_on(
    text: str,
    heard: Sequence[tuple[Source, str]],
    unkept: Source | None = None,
    given: Callable[[str], bool] | None = None,
) -> Source | None:
    """The untrusted source whose instruction or statement the agent's words pass on, with the cue: words
    that read as instructions to an agent and say they are another's (`directives.relayed_directive`), or
    repeat what a tool's text said before them (its code, URL, flag or package, word for word); or words
    that state what a tool's prose stated, in its words or naming what it named, as the agent's own
    (`RETOLD`); or, right after a read whose text the file does not keep (`unkept`), words enough to
    restate it (`directives.restatable`). `given`: whether the person or the repository gave a value
    (`Given.gave`). The agent's own advice is None."""
    found = _passed_on(text, heard, given)
    if found is None and unkept is not None and restatable(text):
        return Source(unkept.tool, unkept.target, False, RETOLD)
    return found


def _passed_on(
    text: str, heard: Sequence[tuple[Source, str]], given: Callable[[str], bool] | None = None
) -> Source | None:
    if not heard or not text:
        return None
    cue = relayed_directive(text)
    source = _repeated(text, heard) if (cue or directive(text)) else None
    if cue is None:
        if source is None:
            told = _restated(text, heard, given)
            return None if told is None else Source(told.tool, told.target, False, RETOLD)
        cue = directive(text)
    if source is None:
        source = heard[-1][0]
    return Source(source.tool, source.target, False, cue)


def _repeated(text: str, heard: Sequence[tuple[Source, str]]) -> Source | None:
    """The tool whose instructions `text` repeats: its text reads as instructions, and `text` says
    something of it word for word (an agent's report of a push repeats git's output, no instruction)."""
    named = marks(text)
    for source, said in reversed(heard):
        if any(m in said for m in named) and directive(said):
            return source
    return None


def _restated(
    text: str, heard: Sequence[tuple[Source, str]], given: Callable[[str], bool] | None = None
) -> Source | None:
    """The outside text (`trust.outside_text`: a page, a search, another MCP server, a file outside the
    repository) whose prose `text` restates as the agent's own (`directives.repeats_prose`, or a
    sentence of it one of the text's requests: `directives.restates_request`; or it names an address
    or a ticket the text's prose gave that the person and the repository did not give:
    `directives.names_stated_value`), or any tool's text (a sub-agent's report) that `text` passes on
    whole (`directives.passes_on_whole`), newest first. The agent restating its own plan, its sub-agent's
    report or a summary of its work in its own words is its own."""
    told = (
        source
        for source, said in reversed(heard)
        if passes_on_whole(text, said)
        or (
            outside_text(source)
            and (
                repeats_prose(text, said)
                or restates_request(text, said)
                or names_stated_value(text, said, given)
            )
        )
    )
    return next(told, None)


def said_in_span(
    events: Sequence[EventDoc],
    start: int | None,
    end: int | None,
    cwd: str | None = None,
    said: str = "",
    hearing: Hearing | None = None,
) -> tuple[str | None, tuple[Source, ...]]:
    """Whose words a memory learned from the session lines `start`..`end` holds: user, agent, tool or
    mixed, with the sources of the tool output among them. With `said` (the memory's text), a tool
    counts only when the memory quotes its output: a command the agent ran, written up by a template,
    is the agent's. `hearing`: the session's, when the caller asks for many memories of one session."""
    if start is None:
        return None, ()
    end = start if end is None else end
    inside = [e for e in events if e.line_no <= end and e.last_line >= start]
    results = {e.tool_call_id: e for e in inside if e.role is Role.TOOL_RESULT and e.tool_call_id}
    called = {e.tool_call_id for e in inside if e.role is Role.TOOL_CALL and e.tool_call_id}
    found: list[_Said] = []
    if hearing is None and any(e.role in (Role.ASSISTANT, Role.THINKING, Role.TOOL_CALL) for e in inside):
        hearing = Hearing(events, cwd)
    for e in inside:
        if e.role is Role.TOOL_RESULT and e.tool_call_id in called:
            continue  # read with its call
        output = _output_of(e, results)
        if said and e.role in (Role.TOOL_CALL, Role.TOOL_RESULT) and not _quotes(said, output):
            found.append(("agent", None))  # the agent's call, not quoted: the tool said nothing here
            continue
        if said and retold_source(e) is not None and not _quotes(said, e.text):
            found.append(("agent", None))  # a summary or a notice beside it, not quoted
            continue
        spoken = hearing is not None and e.role in (Role.ASSISTANT, Role.THINKING)
        heard = hearing.before(e) if spoken else ()
        unkept = hearing.unkept.get(e.seq) if spoken else None
        given = hearing.given(e) if hearing is not None and spoken else None
        own = hearing.own(e) if hearing is not None and e.role is Role.TOOL_CALL else ()
        who, source = said_by(e, _result_of(e, results), output, cwd, heard, unkept, own, given)
        if said and source is not None and not source.trusted:
            # the memory holds `said`, not the whole output, summary or reply: its cue is said's own
            source = (
                passed_on(said, heard, unkept, given)
                if who == "agent"
                else replace(source, directive=directive(said))
            )
        found.append((who, source))
    if not found:
        return None, ()
    by = {b for b, _ in found}
    sources = tuple(dict.fromkeys(x for _, x in found if x is not None))[:MAX_SOURCES]
    return (by.pop() if len(by) == 1 else "mixed"), sources


class Hearing:
    """What a session showed its agent before each of its messages, read once per session: every memory
    learned from it asks for the steps its lines cover, and most memories share their steps."""

    def __init__(self, events: Sequence[EventDoc], cwd: str | None, own: Collection[str] = ()) -> None:
        self._events = list(events)
        self._seeded = frozenset(own)  # files it wrote that its events do not show (`written_by`)
        self._cwd = cwd
        self._at = {x.seq: i for i, x in enumerate(self._events)}
        self._asked = [i for i, x in enumerate(self._events) if x.role is Role.USER and not x.is_sidechain]
        self._heard: dict[tuple[int, int], list[tuple[Source, str]]] = {}
        self.unkept = unkept_reads(self._events, cwd, own)  # the messages right after an unkept read
        self._writes = [
            (i, f)
            for i, x in enumerate(self._events)
            if x.role in (Role.TOOL_CALL, Role.TOOL_RESULT)
            for f in writes(x, cwd)
        ]
        self._given: Given | None = (
            None  # read once, on the first value an agent's words share with a request
        )

    def given(self, e: EventDoc) -> Callable[[str], bool]:
        """Whether the person or a file of the repository gave a value before `e` (`Given.gave`)."""

        def gave(value: str) -> bool:
            if self._given is None:
                self._given = hearing_of(self._events, self._cwd, self._seeded).given
            return self._given.gave(value, e.seq)

        return gave

    def own(self, e: EventDoc) -> frozenset[str]:
        """The files the session wrote before `e`: reading them back is its own text."""
        at = self._at.get(e.seq, len(self._events))
        return self._seeded | {f for i, f in self._writes if i < at}

    def before(self, e: EventDoc) -> list[tuple[Source, str]]:
        """The untrusted tool text the session showed its agent before `e`: for words that read as
        instructions, all the session's; for words that may restate a text (`QUOTED_MARKS` marks, or
        words enough: `directives.restatable`), the step's (since the person's last message)."""
        at = self._at.get(e.seq, len(self._events))
        if directive(e.text):
            first = 0
        elif len(marks(e.text)) < QUOTED_MARKS and not restatable(e.text):
            return []
        else:
            asked = bisect_left(self._asked, at)
            first = self._asked[asked - 1] + 1 if asked else 0
        if (first, at) not in self._heard:
            self._heard[first, at] = heard_in(self._events[first:at], self._cwd, self.own(e))
        return self._heard[first, at]


def heard_in(
    events: Sequence[EventDoc], cwd: str | None, own: Collection[str] = ()
) -> list[tuple[Source, str]]:
    """The untrusted tool text `events` showed the agent, newest last (`Heard`); `own`: files the session
    wrote that `events` do not show."""
    return hearing_of(events, cwd, own).before


def hearing_of(events: Sequence[EventDoc], cwd: str | None, own: Collection[str] = ()) -> Heard:
    """`events` heard in order (`Heard`): the untrusted tool text they showed the agent, and what the
    person and the repository's files gave (`Heard.given`)."""
    heard = Heard(cwd)
    heard.own.update(own)
    results = {x.tool_call_id: x for x in events if x.role is Role.TOOL_RESULT and x.tool_call_id}
    called = {x.tool_call_id for x in events if x.role is Role.TOOL_CALL and x.tool_call_id}
    for x in events:
        if x.role is Role.TOOL_CALL:
            heard.hear(x, results.get(x.tool_call_id))
        elif x.role is not Role.TOOL_RESULT or x.tool_call_id not in called:
            heard.hear(x)
    return heard


QUOTE_CHARS = 40  # a run of a tool's output this long in a memory's text is a quote of it


def _quotes(said: str, output: str) -> bool:
    said, output = " ".join(said.split()).lower(), " ".join(output.split()).lower()
    if len(said) < QUOTE_CHARS:
        return bool(said) and said in output
    return any(said[i : i + QUOTE_CHARS] in output for i in range(0, len(said) - QUOTE_CHARS + 1, 8))


def _result_of(e: EventDoc, results: dict[str | None, EventDoc]) -> EventDoc | None:
    return results.get(e.tool_call_id) if e.role is Role.TOOL_CALL else None


def _output_of(e: EventDoc, results: dict[str | None, EventDoc]) -> str:
    """The text a tool returned for `e`, as `said_by` reads it (after the call's rendering)."""
    result = _result_of(e, results)
    return OUTCOME + result.text if result is not None else (e.text or "")


def _pack(
    pieces: list[tuple[str, int, int, _Said]], request: str, start: int, max_chars: int, sidechain: bool
) -> list[Excerpt]:
    out: list[Excerpt] = []
    current: list[tuple[str, int, int, _Said]] = []
    size = 0
    for piece in pieces:
        text = piece[0][:max_chars]
        if current and size + len(text) + 1 > max_chars:
            out.append(_excerpt(start + len(out), current, request, sidechain))
            current, size = [], 0
        current.append((text, piece[1], piece[2], piece[3]))
        size += len(text) + 1
    if current:
        out.append(_excerpt(start + len(out), current, request, sidechain))
    return out


def _excerpt(index: int, pieces: list[tuple[str, int, int, _Said]], request: str, sidechain: bool) -> Excerpt:
    pieces = _trimmed(pieces)
    by = {p[3][0] for p in pieces}
    sources = list(dict.fromkeys(p[3][1] for p in pieces if p[3][1] is not None))
    sources.sort(key=lambda x: (x.directive is None, x.trusted))  # stable: the session's order within
    kept = sources[:MAX_SOURCES]
    where = {s: i for i, s in enumerate(kept)}
    return Excerpt(
        index=index,
        line_start=min(p[1] for p in pieces),
        line_end=max(p[2] for p in pieces),
        request=request,
        text="\n".join(p[0] for p in pieces),
        sidechain=sidechain,
        said_by=by.pop() if len(by) == 1 else "mixed",
        sources=tuple(kept),
        spans=tuple(Span(len(p[0]), p[3][0], where.get(p[3][1])) for p in pieces),
    )


def _trimmed(pieces: list[tuple[str, int, int, _Said]]) -> list[tuple[str, int, int, _Said]]:
    """`pieces` as their text is stored: without blank space before the first or after the last (a
    memory's text is stored stripped), so that its spans measure the stored text. An excerpt that opens
    on a tool's output whose call line the step before holds starts indented."""
    out = list(pieces)
    while len(out) > 1 and not out[0][0].strip():
        out.pop(0)
    while len(out) > 1 and not out[-1][0].strip():
        out.pop()
    out[0] = (out[0][0].lstrip(), *out[0][1:])
    out[-1] = (out[-1][0].rstrip(), *out[-1][1:])
    return out


# --- rendering one event -------------------------------------------------------------------------
def render_event(e: EventDoc, result: EventDoc | None = None) -> str:
    who = "sub-agent" if e.is_sidechain else None
    if e.role in (Role.USER, Role.ASSISTANT) and _is_placeholder(e.text):
        return ""  # a redacted message says nothing anyone could search for
    if e.role is Role.USER:
        return f"{'task' if e.is_sidechain else 'user'}: {_prose(e.text)}"
    if e.role is Role.ASSISTANT:
        return f"{who or 'agent'}: {_prose(e.text)}" if e.text.strip() else ""
    if e.role is Role.SUMMARY:
        return f"summary: {_prose(e.text)}"
    if e.role is Role.THINKING:
        # low trust and often long: its gist is searchable, not all of it
        return f"{who or 'agent'} thinking: {_clip(_prose(e.text), AGENT_CHARS)}" if e.text.strip() else ""
    if e.role is Role.SYSTEM:
        # a harness's notice is often JSON (Codex's sub-agent notification) or holds a command's output (a
        # page's numeric references): its escaped letters as letters
        return f"note: {_clip(_referenced(_letters(e.text)), AGENT_CHARS)}" if e.text.strip() else ""
    if e.role is Role.TOOL_RESULT:
        return _outcome(e)
    return _call(e, result)


def call_line(call: EventDoc) -> str:
    """A tool call as an excerpt renders it, without its output: the line that says what was run or read."""
    return _call(call, None)


def _call(e: EventDoc, result: EventDoc | None) -> str:
    if is_shell(e) and (command := command_of(e)) and not _redacted(command):
        line = f"$ {_clip(command, 400)}"
        description = _field(e, "description")
        if description:
            line += f"   # {one_line(description, 160)}"
        return line + (("\n" + _outcome(result, _is_prose_file(command))) if result else "")
    if is_edit(e):
        path = edited_path(e) or "?"
        change = _edit_summary(e)
        status = " (failed)" if result is not None and result.is_error else ""
        return f"edit {path}{status}{': ' + change if change else ''}"
    name = e.tool_name or "tool"
    args = "" if _redacted(e.tool_input) else _compact_input(e.tool_input)
    line = f"{name} {args}".rstrip()
    prose = _is_prose_file(str(_field(e, "file_path") or _field(e, "path") or _field(e, "filePath") or ""))
    return line + (("\n" + _outcome(result, prose)) if result else "")


# documents, not code: their lines are all prose, and their `#` headings and `**bold**` are no comments
_PROSE_FILE = re.compile(r"\.(?:md|mdx|markdown|rst|txt|adoc)\b", re.I)


def _is_prose_file(named: str) -> bool:
    return bool(_PROSE_FILE.search(named))


def _outcome(result: EventDoc, prose_file: bool = False) -> str:
    text = result.text or ""
    code = exit_code(result)
    status = ("error" if result.is_error else "ok") if code is None else f"exit {code}"
    plain = "" if _redacted(text) else strip_headers(text)
    body = informative(plain, OUTPUT_CHARS)
    if not body:
        return f"  → {status}"
    if len(plain) > OUTPUT_CHARS and not prose_file and (documented := documented_names(plain)):
        # a file read or printed whole is cut to its head and tail; what its comments say each name
        # is for is how a later question about it finds it ("how does X avoid Y?")
        body += "\n" + documented
    return f"  → {status}: " + body.replace("\n", "\n    ")


def exit_code(result: EventDoc) -> int | None:
    m = _EXIT.search((result.text or "")[:400])
    if m:
        return int(m.group(1))
    return 1 if result.is_error and "exit code" in (result.text or "").lower() else None


def strip_headers(text: str) -> str:
    """A tool's output without its runner's framing (Codex's header lines, Claude Code's line numbers),
    its JSON's escaped letters and a page's numeric character references read as letters (`_letters`,
    `_referenced`)."""
    lines = _referenced(_letters(text)).splitlines()
    if lines and lines[0].startswith("Chunk ID"):
        lines = [ln for ln in lines[:6] if not _CODEX_HEADER.match(ln)] + lines[6:]
    return "\n".join(_LINE_NUMBER.sub("", ln) for ln in lines)


# a JSON escape of a letter beyond ASCII, or of a pair of surrogates (an emoji, a rarer ideograph), its
# backslash escaped again for each JSON document it is a string of (`\\u0414` in a field holding JSON)
_ESCAPED_LETTER = re.compile(r"\\+u(d[89ab][0-9a-f]{2})\\+u(d[c-f][0-9a-f]{2})|\\+u([0-9a-f]{4})", re.I)


def _letters(text: str) -> str:
    """`text` with JSON's escapes of letters beyond ASCII read as the letters: an MCP server's JSON, as
    Codex keeps it, spells "Положите" as "\\u041f\\u043e…", six characters a letter that no one can
    read or search for; a field holding JSON in turn escapes each escape's backslash, and a stray one
    left before the letter (`\\Д`) would make neither the letter nor the JSON readable. An escape of an
    ASCII character (a quote, a control) stays as it is."""
    if "\\u" not in text:
        return text

    def letter(m: re.Match[str]) -> str:
        if m.group(1):
            high, low = int(m.group(1), 16), int(m.group(2), 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        point = int(m.group(3), 16)
        return chr(point) if point >= 0xA0 and not 0xD800 <= point <= 0xDFFF else m.group(0)

    return _ESCAPED_LETTER.sub(letter, text)


# a page's numeric character reference (`&#x50;`, `&#8217;`): a letter that takes six characters or more
_CHARACTER_REFERENCE = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));")


def _referenced(text: str) -> str:
    """`text` with a page's numeric character references read as the letters they are: a page that
    writes each letter as one (`&#x50;&#x65;…`) would fill an excerpt's room with a few words no one can
    search for. A reference to a control character or to none stays as it is."""
    if "&#" not in text:
        return text

    def letter(m: re.Match[str]) -> str:
        point = int(m.group(1), 16) if m.group(1) else int(m.group(2))
        readable = 0x20 <= point <= 0x10FFFF and not 0x7F <= point < 0xA0 and not 0xD800 <= point <= 0xDFFF
        return chr(point) if readable else m.group(0)

    return _CHARACTER_REFERENCE.sub(letter, text)


def informative(text: str, limit: int) -> str:
    """Head, error and status lines, and tail of a long output, within `limit` characters; short
    output as it is. The lines of its middle that say what failed or passed (a CI run's steps, a test
    runner's verdicts) are kept as far as they fit, failures first, in their order."""
    lines = [_RUN.sub(r"\1\1\1", _WS.sub(" ", ln)).rstrip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    joined = "\n".join(lines)
    if len(joined) <= limit:
        return joined
    head, tail = lines[:6], lines[-3:] if len(lines) > 9 else []
    middle = lines[len(head) : len(lines) - len(tail)]
    if any(_HUNK.match(ln) for ln in middle):  # a diff: what it added and removed is what it says
        picked = [ln for ln in middle if _CHANGED.match(ln)][:4]
    else:
        errors = [k for k, ln in enumerate(middle) if _ERROR_LINE.search(ln)][:4]
        room = limit - sum(len(_clip(p, 200)) + 1 for p in [*head, *tail, "…", "…"])
        room -= sum(len(_clip(middle[k], 200)) + 1 for k in errors)
        statuses = [k for k, ln in enumerate(middle) if k not in errors and _STATUS_LINE.search(ln)]
        statuses.sort(key=lambda k: not _FAILED_STATUS.search(middle[k]))  # failures first, stable
        kept = set(errors)
        for k in statuses:
            if len(_clip(middle[k], 200)) + 1 <= room:
                kept.add(k)
                room -= len(_clip(middle[k], 200)) + 1
        picked = [middle[k] for k in sorted(kept)]
    parts = [*head, *(["…", *picked] if picked else []), *(["…", *tail] if tail else [])]
    out = "\n".join(_clip(p, 200) for p in parts)
    return out if len(out) <= limit else out[: limit - 1] + "…"


# a declaration in most languages: a keyword, then the name it declares (Go methods: the receiver first)
_DECLARATION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:static\s+)?"
    r"(?:func|def|class|fn|function|const|let|var|type|interface|struct|enum|trait|module|defmodule|defp?)"
    r"\s+(?:\([^)]*\)\s*)?([A-Za-z_][\w]*)"
)
_COMMENT = re.compile(r"^\s*(?://+|#+(?!!)|--|;+|/\*+|\*+/|\*+(?=\s|$)|\"\"\")\s?(.*?)\s*(?:\*/)?$")
NOTE_WORDS = 5  # a loose comment of fewer words is a label or commented-out code, not an explanation
NOTE_CHARS, NOTES_CHARS = 300, 2_400  # one note; all the notes of one output (a file read whole)


def documented_names(text: str) -> str:
    """What the comments of a long output (a source file read whole) explain, a note a line:
    `defines: name — comment` for a declaration they document, else `note: comment (→ the statement
    they introduce)`. Comments are where a file says why; the code around them is cut. Past the
    room for all of them, the longest explanations are kept (a field's one-line label goes first),
    in the file's order."""
    notes: list[str] = []
    comment: list[str] = []
    docstring_of = None  # a Python-style declaration (`def f():`), whose docstring follows it
    for line in text.splitlines():
        if (m := _COMMENT.match(line)) and not _DECLARATION.match(line):
            if not comment and not (docstring_of and line.lstrip().startswith(_DOCSTRING)):
                docstring_of = None
            if said := m.group(1).strip().strip("\"'").strip():
                comment.append(said)
            continue
        said = " ".join(comment)
        comment = []
        d = _DECLARATION.match(line)
        # a `def`/`class` line's docstring comes after it, not before
        documented, docstring_of = docstring_of, d.group(1) if d and line.rstrip().endswith(":") else None
        if said and documented:
            notes.append(f"defines: {documented} — {_clip(said, NOTE_CHARS)}")
        elif said and d:
            notes.append(f"defines: {d.group(1)} — {_clip(said, NOTE_CHARS)}")
        elif len(_WORDS.findall(said)) < NOTE_WORDS:
            continue
        elif line.strip():
            notes.append(f"note: {_clip(said, NOTE_CHARS)} (→ {_clip(line.strip(), 60)})")
        else:
            notes.append(f"note: {_clip(said, NOTE_CHARS)}")
    kept: set[int] = set()
    used = 0
    for n in sorted(range(len(notes)), key=lambda n: (-len(notes[n]), n)):
        if used + len(notes[n]) + 1 <= NOTES_CHARS:
            kept.add(n)
            used += len(notes[n]) + 1
    return "\n".join(notes[n] for n in sorted(kept))


_DOCSTRING = ('"""', "'''", 'r"""')


def _prose(text: str) -> str:
    lines = [_RUN.sub(r"\1\1\1", _WS.sub(" ", ln)).rstrip() for ln in (text or "").strip().splitlines()]
    return _clip("\n".join(squeeze_traces([ln for ln in lines if ln.strip()])), PROSE_CHARS)


# a line of a stack trace or log in most runtimes: a file and line number (`app.js:12:5`, `main.go:40
# +0x1d`, `File "x.py", line 3`), or nothing but a short frame label between such lines (`at div`)
_FRAME = re.compile(r"[\w.$-]+\.\w{1,5}:\d+|\bline \d+\b|\+0x[0-9a-f]+")
TRACE_KEEP, TRACE_MIN = 3, 8  # a run of frames keeps its first few lines; shorter runs stay whole
FRAME_WORDS = 6  # words a frame has besides its location (`File "x.py", line 3, in f` has five)


def squeeze_traces(lines: list[str]) -> list[str]:
    """Runs of stack-trace lines pasted into a message are cut to their first lines and a count:
    a pasted console log of 87k characters made fourteen excerpts of frames that matched every
    question about the component names in them, and said nothing the first frames do not."""
    out: list[str] = []
    run: list[str] = []
    frames = 0

    def flush() -> None:
        if frames >= TRACE_MIN:
            out.extend(run[:TRACE_KEEP])
            out.append(f"… ({len(run) - TRACE_KEEP} more trace lines)")
        else:
            out.extend(run)

    for line in lines:
        # a frame is mostly its location, or a log line that starts with one (`app.js:12 Warning: …`);
        # `- src/a.py:12 — missing null check on the input` in a list of findings is prose
        where = _FRAME.search(line)
        is_frame = bool(where) and (where.start() == 0 or len(_FRAME.sub(" ", line).split()) <= FRAME_WORDS)
        if is_frame or (run and len(line.split()) <= 3):
            run.append(line)
            frames += is_frame
            continue
        flush()
        run, frames = [], 0
        out.append(line)
    flush()
    return out


def split_prose(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at line ends (else at spaces) where it can be."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:  # one huge line: cut at the last space that fits
            cut = line.rfind(" ", limit // 2, limit)
            cut = cut if cut > 0 else limit
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:cut])
            line = line[cut:].lstrip()
        if current and len(current) + 1 + len(line) > limit:
            pieces.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        pieces.append(current)
    return pieces


def _is_placeholder(value: object) -> bool:
    """A message that is nothing but redaction placeholders, or says no word anyone could search for."""
    return isinstance(value, str) and not _WORDS.search(_PLACEHOLDER.sub(" ", value))


def unsaid(value: object) -> bool:
    """Whether a tool's text held nothing but redaction placeholders (`_redacted`)."""
    return _redacted(value)


def _redacted(value: object) -> bool:
    """A tool's text (a command, its arguments, its output) that held nothing but redaction
    placeholders. Any other is what the tool said, however few its words: `ls`, a count, a line
    whose letters are spaced out."""
    return isinstance(value, str) and not _PLACEHOLDER.sub("", value).strip(" \t\n\"',:;")


def content_words(e: EventDoc, result: EventDoc | None) -> int:
    """Words the session itself said in an event (not our rendering, not placeholders)."""
    said = [e.text, command_of(e) or "" if e.role is Role.TOOL_CALL else "", result.text if result else ""]
    if e.role is Role.TOOL_CALL and isinstance(e.tool_input, dict):
        said.append(" ".join(str(v) for v in e.tool_input.values() if isinstance(v, str)))
    return len(_WORDS.findall(_PLACEHOLDER.sub(" ", " ".join(said))))


def _edit_summary(e: EventDoc) -> str:
    raw = e.tool_input
    if isinstance(raw, dict):
        new = new_text(raw) or raw.get("content") or raw.get("file_text") or ""
        if isinstance(new, str) and new.strip():
            return one_line(new, EDIT_CHARS)
        edits = raw.get("edits")
        if isinstance(edits, list) and edits and isinstance(edits[0], dict):
            return one_line(str(new_text(edits[0]) or ""), EDIT_CHARS)
        raw = patch_text(raw)
    if isinstance(raw, str):  # a patch: its added lines say what changed
        added = patch_added(raw)
        files = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", raw, re.M)
        more = f" (+{len(files) - 1} more files)" if len(files) > 1 else ""
        return one_line(" ".join(added), EDIT_CHARS) + more
    return ""


def _field(e: EventDoc, name: str) -> str | None:
    raw = e.tool_input
    if isinstance(raw, dict):
        value = raw.get(name)
        return value if isinstance(value, str) else None
    return None


def _compact_input(raw: object) -> str:
    if raw is None:
        return ""
    if isinstance(raw, dict):
        keep = {k: v for k, v in raw.items() if v not in (None, "", [], {})}
        text = json.dumps(keep, ensure_ascii=False, default=str)
    else:
        text = str(raw)
    return _clip(text, INPUT_CHARS)


def one_line(text: str, limit: int) -> str:
    return _clip(" ".join((text or "").split()), limit)


def _clip(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

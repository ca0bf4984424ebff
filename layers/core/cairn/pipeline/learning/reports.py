"""What the agent reported it did, once a tool confirmed the work: the concrete values of its account.

Most of what a project's next session needs to be told is said once, in the agent's closing account of
a turn whose work a tool confirmed ("Pushed. Village/Town: 25–50km (was 5–10km)", "Secret:
`DEPLOY_HOST`, New value: `10.0.0.7`", "Changed to the blue scheme (#1e88e5)"). The rule extractor
reads no assistant prose, so those values lived only in transcript excerpts. This learner keeps the
checkable statements of such an account as small facts:

- only the closing reply of a main-thread turn in which an edit or a command that changes something
  succeeded (an answer after only looking around reports no work of its own);
- only statements that carry a value a reader can check: a URL, an address, a path or identifier in
  backticks, a colour, a number with its unit, a changed value ("X (was Y)", "from A to B",
  "New value: …");
- never a question, an offer, a plan or a hedge ("Want me to…", "I'll…", "might"), nor code blocks,
  tables and headings (a statement is one line of prose; a heading titles the lines under it);
- a run of "Label: value" lines is one statement, so "New value: `x`" keeps what it is the value of;
- two statements of one reply on one subject are one fact (`one_per_subject`);
- a few per reply, the changes first, then those with the most values; each says how many words of
  the person's request it answers and whether the turn committed or pushed its work, which the block
  weighs (`services.project_block.fact_weights`).

It reads the shape of a report, not a project's words: nothing here knows a stack or a tool.
"""

from __future__ import annotations

import re

from cairn.domain.models import MemoryKind
from cairn.domain.text import word_pattern
from cairn.domain.vocabulary import Tag
from cairn.pipeline.models import Candidate, EventDoc
from cairn.pipeline.reading.commands import is_probe
from cairn.pipeline.reading.edited_values import stated_values
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.shell import command_of, is_edit, is_shell
from cairn.pipeline.reading.turns import Turn
from cairn.transcripts.model import Role

MAX_PER_REPLY = 2  # a report's two best statements: more repeat them and crowd recall
MIN_CHARS, MAX_CHARS = 16, 220
KV_LINE_CHARS = 90  # a "Label: value" line of a key/value block is short
CONFIDENCE = 0.55  # the agent's word, confirmed only in that its tools worked

_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*•+]\s+|\d+[.)]\s+|[A-Za-z][.)]\s+)*")
_MARKS = re.compile(r"^(?:[^\w`\"'(\[/#<~.-]\s*)+")  # leading emoji and check marks: ✅ ⚠️ →
_BOLD = re.compile(r"\*\*|__")
# a correction a report lists: "❌ `track_id` → ✅ `trackid`", "✗ old -> ✓ new"
_CORRECTION = re.compile(r"[❌✗✘]\s*(?P<old>[^→\n]+?)\s*(?:→|->)\s*[✅✓✔]\s*(?P<new>\S[^\n]*)$")
# [text](target) outside code: the target is the editor's, not a value; in code the reply quotes it
_LINK = re.compile(r"(`[^`\n]*`)|\[([^\]]+)\]\((?:[^)\s]+)\)")
_LABELLED = re.compile(r"^(?P<label>[A-Za-z][\w /'().-]{0,40}?)\s*:\s+(?P<value>\S.*)$")
_URL = re.compile(r"https?://[^\s)>\]'\"`,;]+")
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_TICKED = re.compile(r"`([^`\n]{2,120})`")
_COLOUR = re.compile(r"(?<![\w&])#[0-9a-fA-F]{6}\b")
_UNIT = re.compile(
    r"\b\d+(?:[.,]\d+)?(?:\s?[-–]\s?\d+(?:[.,]\d+)?)?\s?(?:[kmg]b|km|ms|s|m|h|px|%|rpm)\b", re.I
)
# a changed value, in the words reports use for one
_CHANGE = re.compile(
    r"\(was\b|\bwas\s+\S+\)|\bfrom\s+\S.{0,60}?\s+to\s+\S|→|->|\bnew value\b|\bnow\b|\bchanged\b|\bupdated\b"
    r"|\bset to\b|\bswitched\b|\breplaced\b|\binstead of\b|\bmoved\b",
    re.I,
)
# what is not a statement of what is: an offer, a plan, a hedge, advice to the reader, a question
_NOT_STATED = re.compile(
    r"^(?:want me|would you|shall i|should i|do you|let me|let's|i'll|i will|i can|we can|you can|you could"
    r"|you may|you might|if you|try\b|next\b|to do\b|once\b|when you|note\b|tip\b|maybe\b|perhaps\b"
    r"|run\b|check\b|see\b|visit\b|refresh\b|go to\b|make sure\b"
    # steps for the reader, options not taken yet: "Select the distribution", "Create a subdomain"
    r"|select\b|click\b|enter\b|paste\b|copy\b|open\b|create\b|add\b|switch\b|option\b)"
    r"|\b(?:might|may be|could be|probably|not sure|i think|likely|please|try (?:again|it|testing|now))\b"
    # a look of the moment ("the file exists at …"); an impression ("looks correct", "seems to") is
    # kept: it cost a coding set's block a line that answered a question
    r"|\bexists\b"
    # what a fix still needs is a plan, not what is ("This requires a small code change to detect …")
    r"|\b(?:requires|needs|would need|will need)\s+(?:a|an|some|more|further)\s+(?:[\w-]+\s+){0,2}"
    r"(?:change|fix|update|rewrite|work)\b"
    # what is about to happen is no state yet ("will be live in ~2 minutes", "should pick this up")
    r"|\b(?:will|should|would)\b"
    # a check of the moment ("`ping` → returned pong ✅", "fresh data reported at 14:50 today"): the
    # result, not a value that holds
    r"|[✅❌✓✗✔✘]|\b(?:today|yesterday|right now|at the moment|currently|so far)\b"
    # a cheer opens a chat line, not a statement ("Perfect! The task has completed.")
    r"|^(?:perfect|great|excellent|awesome|good news|nice|success)\b\W*!",
    re.I,
)
# a problem seen on the way ("`/api/auth/*` is returning 404", "the same 502 issue") is the state of
# that moment, unless the statement says it was dealt with
_PROBLEM = re.compile(
    r"\b(?:error|issue|problem|failure|fails?|failing|broken|bug|[45]\d\d"
    r"|(?:didn'?t|did not|wasn'?t|was not|doesn'?t|does not) work(?:ing)?)\b",
    re.I,
)
_DEALT = re.compile(r"\b(?:fix(?:ed)?|resolved|solved|solution|now)\b", re.I)
# a ticked span that names no value of its own: a bare word (`main`, `true`), a commit id (the git
# activity of the session says its commits)
_BARE = re.compile(r"^(?:[A-Za-z]{1,12}|[0-9a-f]{7,40})$")
_COMMIT = re.compile(r"\b(?:git|hg|jj|sl)\s+(?:[\w.-]+\s+)*?(?:commit|push)\b")
# a word in any script: an agent that reports in Russian or Chinese states facts as one in English does
_WORDS = re.compile(word_pattern(2))
STEM = 5
_STOP_WORDS = (
    "the and for with that this from into then than now are was were has have had not but you your our "
    "can its it's all any also just more some what when where which who why how there here they them "
    "will would should could been being does did done make made use used want need like"
)
_STOP = frozenset(_STOP_WORDS.split())
MIN_WORDS = 3  # besides its values: a value alone ("`src/main.go`") says nothing about it


def reported_facts(reading: SessionReading) -> list[Candidate]:
    """The checkable statements of the agent's closing accounts of confirmed work, as facts."""
    out: list[Candidate] = []
    seen: set[str] = set()
    said: list[frozenset[str]] = []
    for turn in reading.turns:
        reply = turn.closing_reply
        if reply is None or not confirmed(turn):
            continue
        kept, asked = committed(turn), _stems(turn.request.text)
        gone = reading.taken_out(reply.seq)  # what the session's later edits changed is not current
        for text in one_per_subject(statements(reply.text)[:MAX_PER_REPLY]):
            key = " ".join(text.lower().split())
            # a statement whose every value an earlier one of the session gave says it again
            named = frozenset(v.lower() for v in values(text))
            if key in seen or any(named <= earlier for earlier in said) or stated_values(text) & gone:
                continue
            seen.add(key)
            said.append(named)
            out.append(_fact(text, reply, kept, len(asked & _stems(text))))
    return out


def confirmed(turn: Turn) -> bool:
    """Whether a tool confirmed work in the turn: an edit, or a command that is more than a look
    around, whose result came back without an error."""
    return any(is_edit(e) or not is_probe(command_of(e) or "") for e in _worked(turn))


def committed(turn: Turn) -> bool:
    """Whether the turn's work was committed or pushed: kept, not tried."""
    return any(_COMMIT.search(command_of(e) or "") for e in _worked(turn) if is_shell(e))


def _worked(turn: Turn) -> list[EventDoc]:
    """The main thread's edits and commands in the turn whose result came back without an error."""
    results = {e.tool_call_id: e for e in turn.events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    out = []
    for e in turn.events:
        if e.role is not Role.TOOL_CALL or e.is_sidechain or not (is_edit(e) or is_shell(e)):
            continue
        result = results.get(e.tool_call_id or "")
        if result is not None and not result.is_error:
            out.append(e)
    return out


def statements(text: str) -> list[str]:
    """The statements of one reply worth a fact, the changes first, then the richest in values."""
    found: list[tuple[int, int, str]] = []
    for line in _lines(_FENCE.sub("\n", text)):
        if not MIN_CHARS <= len(line) <= MAX_CHARS or _NOT_STATED.search(line) or line.endswith(("?", ":")):
            continue
        found_values = values(line)
        count = len(found_values)
        # its own words, outside code: a label over a list of names ("Parameters: `direction`, `limit`")
        # says nothing about them
        if not count or len(_WORDS.findall(_without(_TICKED.sub(" ", line), found_values))) < MIN_WORDS:
            continue
        words = prose(line)
        if _PROBLEM.search(words) and not _DEALT.search(words):
            continue
        found.append((-bool(_CHANGE.search(words)), -min(count, 3), line))
    ranked = sorted(range(len(found)), key=lambda i: (found[i][0], found[i][1], i))
    return [found[i][2] for i in ranked]


SHARED_SUBJECT = 2  # content words two statements share besides their values: "column names", "route … port"


def one_per_subject(found: list[str]) -> list[str]:
    """A reply's statements, those on one subject said as one: an account often names a change twice,
    as the problem and as the fix ("The query was using incorrect column names: `latitude` → `lat`",
    "Updated tool.go to use the correct column names"), or in two halves of one table ("Route `/api/x`
    → port 3333", "Route everything else → port 8765"). Two memories of one change read as a duplicate,
    and a later change of it supersedes one and leaves the other."""
    out: list[tuple[str, set[str]]] = []
    for text in found:
        words = _stems(text) - _stems(" ".join(values(text)))
        for i, (kept, subject) in enumerate(out):
            if len(subject & words) >= SHARED_SUBJECT:
                out[i] = (f"{kept.rstrip(' .;')}; {text}", subject | words)
                break
        else:
            out.append((text, words))
    return [text for text, _ in out]


def values(line: str) -> list[str]:
    """The checkable values a statement names: URLs, addresses, colours, numbers with units, and what
    it puts in backticks (a path, an identifier, a command) unless that is a bare word."""
    out = [m.group(0) for rule in (_URL, _IP, _COLOUR, _UNIT) for m in rule.finditer(line)]
    out += [t for t in _TICKED.findall(line) if not _BARE.match(t.strip())]
    return out


def prose(line: str) -> str:
    """A statement's own words, each backticked span one placeholder: a word in code (`NOW()`,
    `fix_error`) says nothing of whether the statement reports a change or a problem."""
    return _TICKED.sub("`v`", line)


def _without(line: str, found: list[str]) -> str:
    for v in found:
        line = line.replace(v, " ")
    return line


def _lines(text: str) -> list[str]:
    """The reply's lines as plain statements; a run of short "Label: value" lines is one."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            out.append("; ".join(block) if len(block) > 1 else block[0])
            block.clear()

    lead = ""  # the line that introduced a list ("The query used the wrong column names:")
    fixes: list[str] = []  # its "❌ old → ✅ new" items

    def flush_fixes() -> None:
        if fixes:
            out.append(f"{lead} {'; '.join(fixes)}" if lead else "; ".join(fixes))
            fixes.clear()

    for raw in text.splitlines():
        if raw.lstrip().startswith("|"):  # a table row: its cells are no sentence
            flush()
            continue
        if fix := _CORRECTION.search(raw):
            # what was wrong and what is right: a change, not a check of the moment
            flush()
            fixes.append(f"{_clean(fix['old'])} → {_clean(fix['new'])}")
            continue
        flush_fixes()
        line = _clean(raw)
        if not line:
            flush()
            continue
        if _HEADING.match(raw):  # the title of what follows ("### Solution: New `x` Tool"), no statement
            flush()
            lead = line
            continue
        if line.endswith(":"):
            lead = line
        if len(line) <= KV_LINE_CHARS and _LABELLED.match(line) and values(line):
            if sum(map(len, block)) + len(line) > MAX_CHARS:
                flush()
            block.append(line.rstrip(" ."))
            continue
        flush()
        out.append(line)
    flush()
    flush_fixes()
    return out


def _clean(line: str) -> str:
    line = _LINK.sub(lambda m: m.group(1) or m.group(2), _BOLD.sub("", line))
    line = _MARKS.sub("", _LEAD.sub("", line)).strip()
    return " ".join(line.split())


def _stems(text: str) -> set[str]:
    """A text's content words, cut to their first letters so "links" meets "link" and "villages"
    meets "village" in any language that inflects at the end."""
    return {w.lower()[:STEM] for w in _WORDS.findall(text) if w.lower() not in _STOP and len(w) > 2}


def _fact(text: str, reply: EventDoc, kept: bool, asked: int) -> Candidate:
    return Candidate(
        kind=MemoryKind.FACT,
        content=text[0].upper() + text[1:],
        tags=[Tag.REPORTED],
        confidence=CONFIDENCE,
        details={
            "source": "agent",
            "values": values(text)[:6],
            "changed": bool(_CHANGE.search(prose(text))),
            "committed": kept,  # the turn committed or pushed its work
            "asked": asked,  # words of the request it answers: the outcome the person asked for
        },
        line_start=reply.line_no,
        line_end=reply.last_line,
    )

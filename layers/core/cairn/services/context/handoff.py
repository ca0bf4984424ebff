"""The "Where you left off" section: the pending handoff, or when this agent last worked here.

A handoff is single-use per project and agent: the service's delivery closes it (`ContextService`'s
`_consume`); here is which handoffs wait for whom (`pending_handoffs`) and how the newest one is shown.
Its content is cut at `ITEM_CHARS`, its lists (the requests that led up to the last one, what was
reported along the way, next steps, open questions, what still fails) follow it one line each. An
agent's words that pass on a tool's instruction are not shown unasked; the person's requests are theirs.
What still fails is named here only while "Unresolved errors" has no lines and the last session did not
go on past its failures, and then only what is still current (`_closed_errors`).

The handoff also keeps the other sections from repeating it: a line it already says at length is shown
as "(as above)" (`said_pieces`, `unsaid`), and what it reported along the way is not a line elsewhere
(`reported_items`, `body`), unless a titled line there says the report whole ("How the last request
ended: …", `titled_body`): then that line says it and the handoff's list, which cuts it short, does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from cairn.domain.models import Memory
from cairn.domain.ports import SessionRepository
from cairn.domain.vocabulary import STILL_FAILING
from cairn.services.agents import normalise_agent_or_none
from cairn.services.context.layout import Layout
from cairn.services.context.lines import ITEM_CHARS, WORD, WS, Line, bare, clip, ref, strings
from cairn.services.directives import relayed
from cairn.services.handoffs import is_waiting_handoff, said_first

REPEAT_CHARS = 60  # a stretch this long said twice in one block is said once
_TITLED = re.compile(r"^\*\*[^*\n]{1,120}\*\*: ")
_LABEL = re.compile(r"^[A-Z][\w ]{0,40}: ")  # a handoff line's own label ("Git at the end: ")
LABELLED_MIN_CHARS = 80  # a labelled line past the handoff's room still says what it is about
LAST_REQUEST = "Last request:"  # the line of a learned handoff that holds the person's words


@dataclass(frozen=True, slots=True)
class Failures:
    """What one assembly learned of the project's failures, for the handoff's "still failing" line:
    whether the last session went on past all of its own, and every error memory still current. Passed
    along, never kept on the service: one service answers concurrent requests of many teams."""

    got_past: bool = False
    current: tuple[Memory, ...] = ()


def pending_handoffs(found: Iterable[Memory], member: str, project: str, agent: str) -> list[Memory]:
    """Handoffs of this project waiting for this agent (`handoffs.is_waiting_handoff`, the one rule MCP's
    handoff tools follow too) and for this member, the latest said first (`handoffs.said_first`).

    A handoff that names its member (`details.member`, or the owner of a personal one) is someone's own
    thread of work: it waits for them, not for the first teammate who opens the project.
    """
    out = []
    for m in found:
        if m.project != project or not is_waiting_handoff(m, agent):
            continue
        owner = m.details.get("member") or m.owner
        if not owner or owner == member:
            out.append(m)
    return said_first(out)


def handoff_lines(
    h: Memory,
    errors_shown: bool,
    layout: Layout,
    failing: Sequence[Memory],
    elsewhere: frozenset[str] = frozenset(),
) -> list[Line]:
    """`elsewhere`: what other sections' titled lines say whole (`titled_body`); a report one of
    them says is left to it (the handoff's list cuts each report short)."""
    content = h.content
    closed = _closed_errors(h, failing)
    if closed or (errors_shown and strings(h.details.get("errors"))):
        # its failing commands are the "Unresolved errors" section's lines, with their errors, or
        # some no longer fail: those that still do are listed below
        content = "\n".join(ln for ln in content.splitlines() if not ln.startswith(STILL_FAILING))
    # the agent's words in it (what it reported, its next steps) that pass on a tool's
    # instruction are not shown unasked (`directives.relayed`); the person's requests are theirs
    content = "\n".join(
        ln for ln in content.splitlines() if ln.startswith(LAST_REQUEST) or relayed(ln) is None
    )
    shown, cut = _shown(content)
    said = WS.sub(" ", content)
    # (details key, label, characters an item keeps, the items shown, whether a cut counts);
    # the requests that led up to the last one are its nearest, and one cut short is named,
    # not wanted whole: it alone is no reason for an id
    lists = (
        ("asked_before", "Asked before that", 80, slice(-layout.asked_before, None), False),
        (
            "reported",
            "Reported along the way",
            layout.reported_chars,
            slice(-layout.reported, None),
            True,
        ),
        ("next_steps", "Next steps", 160, slice(5), True),
        ("open_questions", "Open questions", 160, slice(5), True),
        # what still fails is named; its error is a line of "Unresolved errors"
        ("errors", STILL_FAILING[:-1], 70, slice(5), True),
    )
    rest = ""
    for key, label, limit, shown_items, counts in lists:
        items = strings(h.details.get(key))
        if key != "asked_before":
            items = [i for i in items if relayed(i) is None]
        if key == "reported":
            items = [i for i in items if _words(i) not in elsewhere]
        if key == "errors":
            items = [] if errors_shown else [i.split(": ", 1)[0] for i in items if i not in closed]
        # a handoff's content often says its lists already (the pipeline's does)
        items = [i for i in items if WS.sub(" ", i).strip()[:40] not in said]
        if items:
            clipped = [clip(i, limit) for i in items[shown_items]]
            if counts:
                cut = cut or len(clipped) < len(items) or any(c for _, c in clipped)
            rest += f"  - {label}: " + "; ".join(t.rstrip(" .;") for t, _ in clipped) + "\n"
    head, *labelled = shown
    text = f"- {head}{ref(h.id) if cut else ''}\n" + "".join(f"  - {t}\n" for t in labelled) + rest
    return [Line(text, h.id, h.content_hash)]


def _shown(content: str) -> tuple[list[str], bool]:
    """The handoff's lines as shown, within `ITEM_CHARS` together, and whether any was cut short: its
    first, then each labelled one of its own ("Git at the end: …"), so a request does not read as running
    into git's words. A handoff an agent wrote in prose is one line, as it wrote it."""
    segments: list[str] = []
    for ln in content.splitlines():
        if not segments or _LABEL.match(ln):
            segments.append(ln)
        else:
            segments[-1] += "\n" + ln
    shown, cut, room = [], False, ITEM_CHARS
    for seg in segments:
        text, short = clip(seg, max(room, LABELLED_MIN_CHARS))
        if text:
            shown.append(text)
            room -= len(text)
        cut = cut or short
    return shown or [""], cut


def last_session_lines(sessions: SessionRepository | None, team: str, project: str, agent: str) -> list[Line]:
    """With no handoff pending, when this agent last worked here is still worth one line."""
    if sessions is None:
        return []
    for s in sessions.list(team, project, limit=10).items:
        if normalise_agent_or_none(s.agent) == agent:
            when = s.ended_at or s.started_at or s.updated_at
            day = f"{when:%Y-%m-%d}"
            return [
                Line(
                    f"- No handoff pending; the last {agent} session here was on {day} ({s.status}).\n", None
                )
            ]
    return []


def _closed_errors(handoff: Memory, failing: Sequence[Memory]) -> set[str]:
    """The errors a learned handoff names whose failure its session no longer holds current: the dream
    pass closed it (a later run of the same command got past it), so it does not still fail. Each error
    the pipeline's handoff names is an error memory of its session; a handoff an agent saved has no
    session here and keeps every error it names."""
    session = handoff.provenance.session_id
    if not session:
        return set()
    current = " ".join(
        f"{m.title or ''} {m.content} {m.details.get('command') or ''}"
        for m in failing
        if m.provenance.session_id == session
    )
    return {
        e
        for e in strings(handoff.details.get("errors"))
        if bare(e.split(": ", 1)[0].strip("`")) not in current
    }


# --- what the handoff says, the other sections do not say again -----------------------------------
def reported_items(handoff: Memory, layout: Layout) -> set[str]:
    """The handoff's "Reported along the way" items the block shows, as `body` reads a line."""
    items = strings(handoff.details.get("reported"))[-layout.reported :]
    return {_words(i) for i in items}


def body(line: Line) -> str:
    """A line's words, as `reported_items` reads an item: the marks around a quoted statement
    (`"…"*`, a closing stop) do not make it another one."""
    return _words(line.text.removeprefix("- "))


def titled_body(line: Line) -> str | None:
    """The words of a titled line after its title ("**How the last request ended**: …"), as
    `reported_items` reads an item; None for a line with no title."""
    text = line.text.removeprefix("- ")
    titled = _TITLED.match(text)
    return _words(text[titled.end() :]) if titled else None


def _words(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def said_pieces(handoff: str) -> list[str]:
    """What a handoff says at length, line by line without its labels ("Git at the end: …")."""
    pieces = (_LABEL.sub("", WS.sub(" ", line).strip()) for line in handoff.splitlines())
    return [p for p in pieces if len(p) >= REPEAT_CHARS]


def unsaid(line: Line, said: list[str]) -> Line:
    """`line` without what the handoff already says at length (the git state both a handoff and the
    session's git episode end with): the block never spends its budget twice on one text."""
    # only what the line says: its id (which shares its first characters with every id) is kept
    end = line.text.rfind(f" [{line.memory_id}]") if line.memory_id else -1
    text = line.text[:end] if end >= 0 else line.text
    shorter = text
    for piece in said:
        shorter = shorter.replace(piece, "(as above)")
    return line if shorter == text else replace(line, text=shorter + line.text[len(text) :])

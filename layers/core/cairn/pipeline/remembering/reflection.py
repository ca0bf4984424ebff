"""A session's reflection memory and the handoff to the next session, from its one reading.

The handoff is what the next session of the project is told first: the last request and those before it, what
the agent reported as each one's outcome, the next steps (the agent's own open todo/plan items and "next
steps" it wrote), open questions it asked, and errors that never stopped failing; of the agent's words, not
those that pass on a tool's instruction (`reading.steps.passed_on`). One reflection and one
handoff per session: a later part of the same session supersedes the earlier ones, so re-learning a growing
session never piles them up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Provenance, Scope, content_hash
from cairn.domain.text import word_count
from cairn.domain.vocabulary import STILL_FAILING, TITLE_CHARS
from cairn.pipeline.deps import PipelineDeps, pipeline_principal
from cairn.pipeline.reading.edited_values import stated_values
from cairn.pipeline.reading.failures import errors_fixed
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.shell import edited_path, shown_command, succeeded_edits
from cairn.pipeline.reading.steps import hearing_of, passed_on, unkept_reads
from cairn.pipeline.reading.turns import PLACEHOLDER, Turn
from cairn.services.handoffs import HandoffNote, HandoffService
from cairn.services.memories import NewMemory
from cairn.transcripts.model import Role

_NEXT_HEADING = re.compile(r"^\s*#*\s*\**\s*next steps?\b.*$", re.I | re.M)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")
MAX_ITEMS = 8
MAX_DONE = 40


def save_once_per_session(
    deps: PipelineDeps,
    session,
    kind: MemoryKind,
    content: str,
    details: dict,
    said_at: datetime | None = None,
) -> Memory:
    """One reflection per session: a later part's supersedes the earlier one; the same one is kept."""
    caller = pipeline_principal(session)
    new = NewMemory(
        kind=kind,
        content=content,
        project=session.project,
        confidence=0.7,
        title=f"{kind.value.capitalize()} of session {session.id}"[:TITLE_CHARS],
        details={**details, "session_id": session.id},
        provenance=consolidation_provenance(session),
        said_at=said_at or session.ran_at,
    )
    flt = MemoryFilter(
        project=session.project,
        include_team_scope=False,
        kinds=frozenset({kind}),
        scopes=frozenset({Scope.PROJECT}),
        session_id=session.id,
    )
    earlier = list(deps.memories.list(caller, flt, limit=10).items)
    same = next((m for m in earlier if m.content_hash == content_hash(kind, content)), None)
    if same is not None:
        return same
    if earlier:
        return deps.memories.supersede(caller, earlier[0].id, new)[1]
    return deps.memories.remember(caller, new)


def save_handoff(
    deps: PipelineDeps,
    session,
    summary: dict[str, Any],
    unresolved: Sequence[dict[str, Any]],
    said_at: datetime | None = None,
) -> Memory:
    """The session's handoff, saved the way agents save theirs (one waiting per project and agent)."""
    content = handoff_text(summary, unresolved)
    caller = pipeline_principal(session)
    flt = MemoryFilter(
        project=session.project,
        include_team_scope=False,
        kinds=frozenset({MemoryKind.HANDOFF}),
        session_id=session.id,
        include_superseded=True,
    )
    for m in deps.memories.list(caller, flt, limit=50).items:
        if m.content_hash == content_hash(MemoryKind.HANDOFF, content):
            return m  # this very handoff was saved (and maybe delivered) already: a rerun changes nothing
    note = HandoffNote(
        project=session.project,
        summary=content,
        agent=session.agent,
        next_steps=tuple(summary["next_steps"]),
        open_questions=tuple(summary["open_questions"]),
        errors=tuple(f"`{shown_command(u['command'])}`: {u['error']}" for u in unresolved),
        session_id=session.id,
        asked_before=tuple(summary["asked_before"]),
        reported=tuple(summary["reported"]),
        said_at=said_at or session.ran_at,
    )
    return HandoffService(deps.memories, deps.clock).save_handoff(caller, note)


def consolidation_provenance(session) -> Provenance:
    last = session.transcript_keys[-1] if session.transcript_keys else None
    return Provenance(session_id=session.id, transcript_key=last, agent=session.agent)


def summarise(reading: SessionReading) -> dict[str, Any]:
    """What the reflection and the handoff say of a session, from its one reading."""
    events = reading.events
    requests = [t.request.text.strip() for t in reading.turns]
    tools: dict[str, int] = {}
    for e in events:
        if e.role is Role.TOOL_CALL and e.tool_name and not PLACEHOLDER.match(e.tool_name):
            tools[e.tool_name] = tools.get(e.tool_name, 0) + 1
    files = list(dict.fromkeys(p for e in succeeded_edits(events) if (p := edited_path(e))))
    main_replies = [e for e in events if e.role is Role.ASSISTANT and not e.is_sidechain]
    last_reply = main_replies[-1].text if main_replies else ""
    hearing = hearing_of(events, reading.cwd, reading.own)
    # the agent's messages right after a read whose text the file does not keep, and what it read
    unread = unkept_reads(events, reading.cwd, reading.own)
    unkept = [(e.text, source) for e in main_replies if (source := unread.get(e.seq)) is not None]

    def own(items: list[str]) -> list[str]:
        """The agent's words the next session is told unasked: not those passing a tool's text on."""
        return [
            i
            for i in items
            if passed_on(i, hearing.before, next((s for t, s in unkept if i in t), None), hearing.given.gave)
            is None
        ]

    return {
        "requests": [r[:300] for r in requests[:MAX_ITEMS]],
        "last_request": requests[-1][:500] if requests else None,
        # what led up to the last request: the next session resumes a thread, not one message
        # ("continue", "yes, do it" say nothing on their own)
        "asked_before": [r[:200] for r in requests[:-1] if word_count(r) >= 3][-MAX_ITEMS:],
        "reported": own(reported(reading.turns, reading.taken_out))[-MAX_ITEMS:],
        "tools": dict(sorted(tools.items(), key=lambda kv: -kv[1])[:12]),
        "files_edited": files[:20],
        "errors_fixed": errors_fixed(reading.shell_calls)[:MAX_ITEMS],
        "unresolved_errors": [u["command"] for u in reading.unresolved],
        "next_steps": own(next_steps(reading, last_reply)),
        # what the agent's todo lists marked done: evidence a later dream pass closes older open items by
        "done": list(dict.fromkeys(i for t in reading.todo_lists for i in t.done_items))[-MAX_DONE:],
        "open_questions": own(open_questions(last_reply)),
        "git_state": reading.git_state,
        # values its edits took out of the project's files: a later dream pass ends an earlier fact
        # that still states one as current
        "edited_out": list(reading.edited_out),
    }


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\[])|\n+")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
REPORTED_CHARS = 300


def reported(
    session_turns: Sequence[Turn], taken_out: Callable[[int], frozenset[str]] | None = None
) -> list[str]:
    """What the agent reported as each request's outcome, in order: the first sentence of the reply
    that closed the request which names something exactly (inline code: a file, a function, a value,
    a command) and says something of it (three words beside the code). Agents everywhere write such
    replies in markdown; the first exact sentence is the headline ("Verified `x` shipped in `y`, so
    kept the soft-deprecation"), where the opening words alone are often "Done." or "All tests pass".
    A report that gives as current a value the session's later edits took out (`taken_out`, from
    `edited_values.taken_out_after`) is no outcome any more: the session's own work changed it."""
    out: list[str] = []
    for turn in session_turns:
        if (reply := turn.closing_reply) is None:
            continue
        gone = taken_out(reply.seq) if taken_out is not None else frozenset()
        for piece in _sentences(reply.text):
            # a line that leads in to a code block or a list says what follows, not an outcome
            if piece.endswith(":"):
                continue
            if _CODE_SPAN.search(piece) and len(_CODE_SPAN.sub(" ", piece).split()) >= 3:
                if piece[:REPORTED_CHARS] not in out and not stated_values(piece) & gone:
                    out.append(piece[:REPORTED_CHARS])
                break
    return out


def _sentences(text: str) -> list[str]:
    """A reply's sentences and list items, without markdown emphasis; a line that leads in with a
    colon is one sentence with the code on the line after it ("saved on:" then `remote:branch/<id>`)."""
    out: list[str] = []
    for piece in _SENTENCE.split(text):
        piece = " ".join(piece.replace("**", "").strip(" -*#>").split())
        if not piece:
            continue
        if out and out[-1].endswith(":") and _CODE_SPAN.fullmatch(piece.rstrip(".")):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return out


def next_steps(reading: SessionReading, last_reply: str) -> list[str]:
    """Open items of the agent's last todo list, then the "next steps" it wrote in its last reply."""
    steps: list[str] = []
    lists = [t for t in reading.todo_lists if not t.event.is_sidechain] or list(reading.todo_lists)
    if lists:
        steps.extend(lists[-1].open_items)
    if m := _NEXT_HEADING.search(last_reply):
        for line in last_reply[m.end() :].splitlines():
            if b := _BULLET.match(line):
                steps.append(b.group(1).strip()[:200])
            elif line.strip() and steps:
                break
    return list(dict.fromkeys(steps))[:MAX_ITEMS]


def open_questions(last_reply: str) -> list[str]:
    return [q[:300] for q in _sentences(last_reply) if q.endswith("?")][:MAX_ITEMS]


def reflection_text(session, s: dict[str, Any]) -> str:
    parts = [f"Session {session.id} ({session.agent})."]
    if s["requests"]:
        parts.append("Asked: " + " | ".join(r[:120] for r in s["requests"][:4]) + ".")
    if s["files_edited"]:
        parts.append(f"Edited {len(s['files_edited'])} files, e.g. " + ", ".join(s["files_edited"][:4]) + ".")
    if s["errors_fixed"]:
        parts.append("Fixed failures of: " + ", ".join(f"`{c}`" for c in s["errors_fixed"][:4]) + ".")
    if s["unresolved_errors"]:
        failing = ", ".join(f"`{shown_command(c)}`" for c in s["unresolved_errors"][:4])
        parts.append(f"{STILL_FAILING} {failing}.")
    if s["tools"]:
        parts.append("Tools: " + ", ".join(f"{n}×{c}" for n, c in list(s["tools"].items())[:6]) + ".")
    return " ".join(parts)


def handoff_text(s: dict[str, Any], unresolved: Sequence[dict[str, Any]]) -> str:
    parts = []
    if s["last_request"]:
        parts.append(f"Last request: {s['last_request'][:300]}")
    if s["next_steps"]:
        parts.append("Next steps: " + "; ".join(s["next_steps"]))
    if s.get("git_state"):
        parts.append(f"Git at the end: {s['git_state']}")
    if s["open_questions"]:
        parts.append("Open questions: " + " ".join(s["open_questions"]))
    if unresolved:  # the commands; each error is in the handoff's details and an episode of its own
        failing = "; ".join(f"`{shown_command(u['command'])[:80]}`" for u in unresolved)
        parts.append(f"{STILL_FAILING} {failing}")
    return "\n".join(parts) or "Nothing left open in this session."

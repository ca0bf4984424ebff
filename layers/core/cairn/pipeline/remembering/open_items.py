"""Open items and the later work that closes them, read off memories (pure: no store).

An item is left open by a session as
- an episode of what was left to do (tag `open`: unfinished todos, a summary's pending work), its
  `details.items`;
- an episode of an error that never stopped failing (tag `unresolved`), its `details.command`;
- the handoff's `next_steps`, `open_questions` and `errors`;
- an account of the session's end that left keeping its work to the person ("ready for you to commit and
  deploy") while files it edited were not committed, its `details.handover`.
A later session closes it with evidence it kept: a todo it marked done (its reflection's `details.done`),
a commit or an account of finished work (its episodes), a fix of the failing command (its reflection's
`errors_fixed`, an episode tagged fixed or resolved) or the command run well (a procedure's
`details.runs` for that session). A text item is closed when most of its content words are in one piece of
that evidence; a command when the same command (`subjects.same_command`: however a session ran it) is
shown fixed or run well, or its error (`problem`) is shown fixed, in a later session or later in its own; a
handover when a later session of the same person's checkout ran a `git status` that lists none of its
files (and, if it asked for a push or deploy, whose branch was not ahead): the work was committed in
between, by the agent or by hand (`Handover.taken_up`).

A failure is a state of its moment, not an intention: one that no later session ever met again (ran
its command, well or not, or hit its error: `met`) was left behind by the project's work, and the
dream pass says so once enough sessions have come after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cairn.domain.models import Memory, MemoryKind
from cairn.domain.vocabulary import RESOLVED_TAGS, Tag
from cairn.pipeline.reading.git_state import Tree
from cairn.pipeline.remembering.subjects import _STOP, core_command, same_command, words

COVERED = 0.7  # of an item's content words found in one piece of later evidence
MIN_ITEM_WORDS = 3  # "Fix it" matches anything
HANDOFF_LISTS = ("next_steps", "open_questions", "errors")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one later session shows done: texts (done todos, commits, accounts) and commands run well."""

    session_id: str
    memory_id: str
    texts: tuple[str, ...] = ()
    commands: frozenset[str] = frozenset()
    at: tuple[str, int] | None = None  # (transcript part, line) where its session showed it
    errors: frozenset[str] = frozenset()  # the errors it shows fixed, each as `problem` reads it
    tree: Tree | None = None  # what its last `git status` of its checkout listed as not committed
    member: str | None = None  # whose session: another person's checkout is another tree


@dataclass(frozen=True, slots=True)
class Handover:
    """Keeping a session's work (commit, push, deploy) left to the person, and the files it is about."""

    item: str
    asks: frozenset[str]
    paths: tuple[str, ...]
    member: str | None

    def taken_up(self, later: Iterable[Evidence]) -> Evidence | None:
        """The first later session of the same person whose `git status` lists none of the files (and,
        when a push or deploy was asked, whose branch was not ahead of its upstream)."""
        pushed = bool(self.asks & {"push", "deploy"})
        for ev in later:
            if ev.tree is None or (self.member and ev.member and ev.member != self.member):
                continue
            if not any(ev.tree.lists(p) for p in self.paths) and not (pushed and ev.tree.ahead):
                return ev
        return None


def handover_of(memory: Memory) -> Handover | None:
    """The handover an account of a session's end holds (None for anything else)."""
    d = memory.details.get("handover") if memory.kind is MemoryKind.EPISODE else None
    if not isinstance(d, dict):
        return None
    paths = tuple(str(p) for p in d.get("paths") or [] if str(p).strip())
    asks = frozenset(str(a) for a in d.get("asks") or [])
    if not paths or not asks:
        return None
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    item = f"{' and '.join(sorted(asks))} the changes to {shown}"
    return Handover(item, asks, paths, memory.provenance.member)


def problem(error: str) -> str | None:
    """An error line as two sessions would both print it: lower case, numbers as placeholders (`line 1`
    of one shell is `line 7` of another); None when it says too little to be one problem (`Exit code
    1`, `000`, `CPU: 1ms`)."""
    said = _NUMBERS.sub("#", " ".join(error.lower().split()))
    return said if len(content_words(_NUMBERS.sub(" ", said))) >= MIN_ITEM_WORDS else None


_NUMBERS = re.compile(r"\d+")


def where(memory: Memory, end: bool = False) -> tuple[str, int] | None:
    """Where in its session's transcript a memory was said: its part and first line (its last with
    `end`: a fix that spans the failure and the run that passed shows it done where it ends)."""
    p = memory.provenance
    line = (p.line_end if end else None) or p.line_start
    return (p.transcript_key or "", line) if line is not None else None


def after_in_session(item_memory: Memory, ev: Evidence) -> bool:
    """Evidence its own session showed after the item was left open (same part, a later line): a
    command that failed and then ran well another way in that session (`go build ./go/cmd/x` from the
    wrong folder, then `go build ./cmd/x`) is a failure the session got past."""
    here = where(item_memory)
    return (
        ev.session_id == item_memory.provenance.session_id
        and here is not None
        and ev.at is not None
        and ev.at[0] == here[0]
        and ev.at[1] > here[1]
    )


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in _STOP and len(w) > 2}


def items_of(memory: Memory) -> list[str]:
    """The open items a memory holds (empty for anything else)."""
    d = memory.details
    if memory.kind is MemoryKind.HANDOFF:
        return [str(i) for key in HANDOFF_LISTS for i in (d.get(key) or []) if str(i).strip()]
    if memory.kind is not MemoryKind.EPISODE:
        return []
    if Tag.UNRESOLVED in memory.tags and d.get("command"):
        return [core_command(str(d["command"]))]
    if Tag.OPEN in memory.tags and Tag.TAKEN_UP not in memory.tags:
        return [str(i) for i in (d.get("items") or [memory.content]) if str(i).strip()]
    if handover := handover_of(memory):
        return [handover.item]
    return []


def evidence_of(memory: Memory) -> Evidence | None:
    """What a memory shows done, in its session (None when it shows nothing done)."""
    session = memory.provenance.session_id
    if not session or not memory.is_current and not memory.superseded_by:
        return None
    d = memory.details
    texts: list[str] = []
    commands: set[str] = set()
    errors: set[str] = set()
    tree: Tree | None = None
    if memory.kind is MemoryKind.REFLECTION:
        texts += [str(i) for i in d.get("done") or []]
        commands |= {core_command(str(c)) for c in d.get("errors_fixed") or []}
    elif memory.kind is MemoryKind.EPISODE and not (Tag.OPEN in memory.tags or Tag.UNRESOLVED in memory.tags):
        fixed = RESOLVED_TAGS & set(memory.tags) or d.get("outcome") in RESOLVED_TAGS
        if fixed and d.get("command"):
            commands.add(core_command(str(d["command"])))
            errors.add(problem(str(d.get("error") or "")) or "")
        elif Tag.ERROR not in memory.tags:  # a failure that was fixed is no account of work done
            texts.append(memory.content)
        tree = _tree(d.get("tree")) if Tag.GIT in memory.tags else None
    elif memory.kind is MemoryKind.PROCEDURE and isinstance(d.get("runs"), dict):
        ran_well = d["runs"].get(session)
        if d.get("command") and isinstance(ran_well, list) and ran_well and int(ran_well[0]) > 0:
            commands.add(core_command(str(d["command"])))
            errors.add(problem(str(d.get("fixes_error") or "")) or "")
    if not texts and not commands:
        return None
    errors.discard("")
    return Evidence(
        session,
        memory.id,
        tuple(texts),
        frozenset(commands),
        where(memory, end=True),
        frozenset(errors),
        tree,
        memory.provenance.member,
    )


def _tree(stored: object) -> Tree | None:
    if not isinstance(stored, dict) or not isinstance(stored.get("dirty"), list):
        return None
    dirty = tuple(str(p) for p in stored["dirty"])
    return Tree(dirty, bool(stored.get("ahead")), stored.get("complete") is not False)


def failure_of(memory: Memory) -> tuple[str, str | None] | None:
    """(command, problem) of an error that never stopped failing in its session; None for anything else."""
    d = memory.details
    if memory.kind is not MemoryKind.EPISODE or Tag.UNRESOLVED not in memory.tags or not d.get("command"):
        return None
    return core_command(str(d["command"])), problem(str(d.get("error") or ""))


def met(memory: Memory) -> tuple[set[str], set[str]]:
    """The commands a memory shows run (well or not: a procedure, an error, a fix) and the errors it
    shows (`problem`), for telling whether a later session met a failure again."""
    d = memory.details
    if memory.kind not in (MemoryKind.EPISODE, MemoryKind.PROCEDURE) or not d.get("command"):
        return set(), set()
    errors = {problem(str(d.get(key) or "")) for key in ("error", "fixes_error")}
    return {core_command(str(d["command"]))}, {e for e in errors if e}


def runs_by_session(memory: Memory) -> dict[str, list[int]]:
    """A procedure's (successes, failures) per session it ran in."""
    runs = memory.details.get("runs")
    return {str(s): [int(r[0]), int(r[1])] for s, r in runs.items()} if isinstance(runs, dict) else {}


def closer(
    item: str, is_command: bool, later: Iterable[Evidence], error: str | None = None
) -> Evidence | None:
    """The first piece of later evidence that shows `item` done: for a failing command, the same command
    run well or fixed, or its `error` fixed (another command that hit the same problem: `go: command
    not found` fixed for `go build` is fixed for `go doc` too)."""
    wanted = content_words(item)
    trouble = problem(error) if error else None
    for ev in later:
        if is_command:
            if any(same_command(item, command) for command in ev.commands) or trouble in ev.errors:
                return ev
            continue
        if len(wanted) < MIN_ITEM_WORDS:
            continue
        for text in ev.texts:
            if len(wanted & content_words(text)) / len(wanted) >= COVERED:
                return ev
    return None

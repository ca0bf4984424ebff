"""The "Proven procedures" section: the project's checks and builds, and the procedures worth repeating.

It admits procedures that worked at least as often as they failed (or are pinned). Over several
sessions the checks and one-command builds are merged into one line, each command once with the
sessions that ran it (`project_block.kept_commands`), and a one-off procedure with no repeatable purpose
is left out; a procedure whose every step the checks already list is not repeated. The checks get more
room than other lines (`CHECKS_CHARS`): they are what every next session runs.
"""

from __future__ import annotations

from cairn.domain.models import Memory
from cairn.domain.vocabulary import Tag
from cairn.services.context.lines import (
    ITEM_CHARS,
    UNRANKED,
    WS,
    Line,
    Rank,
    bare,
    inline,
    line,
    newest_first,
    strings,
)
from cairn.services.project_block import (
    KeptCommand,
    is_command_memory,
    kept_commands,
    repeatable,
    written_order,
)

CHECKS_CHARS = 900


def procedure_lines(found: list[Memory], project: str, rank: Rank) -> list[Line]:
    """The project's checks and builds first, then the procedures worth repeating, proven first.

    Over several sessions the checks and one-command builds are merged: each command once, with the
    sessions that ran it (`project_block.kept_commands`), and a procedure with no repeatable purpose (a
    one-off look at a server that happened to work) is left out. A project of one session keeps its
    procedures as that session wrote them."""

    def proven(m: Memory) -> float:
        ok, bad = _count(m, "success_count"), _count(m, "failure_count")
        return (ok + 1) / (ok + bad + 2)  # Laplace: 1 success of 1 ranks below 9 of 10

    found = [m for m in found if _count(m, "success_count") >= _count(m, "failure_count") or m.pinned]
    merged = [m for m in found if is_command_memory(m) and not m.pinned]
    # one session's procedures are its own, as it wrote them; a project's life merges them
    merged = merged if len({m.provenance.session_id for m in found}) >= 2 else []
    kept = kept_commands(merged)
    if merged:
        found = [m for m in found if m not in merged and repeatable(m)]
    # a procedure whose every step the checks already list is not repeated (a fix that runs a check
    # again after another step says more than the check: it stays)
    listed = {k.command for k in kept}
    listed |= {bare(s) for m in found if Tag.CHECKS in m.tags for s in strings(m.details.get("steps"))}
    found = [m for m in found if Tag.CHECKS in m.tags or not _steps_of(m) <= listed]
    newest = newest_first(found)
    found.sort(
        key=lambda m: (
            -m.pinned,
            *rank.get(m.id, UNRANKED),
            Tag.CHECKS not in m.tags,
            -proven(m),
            *newest(m),
        )
    )
    # the project's checks are what every next session runs: they get room to list each command
    room = {True: CHECKS_CHARS, False: ITEM_CHARS}
    lines = [_commands_line(kept)] if kept else []
    return lines + [line(m, project, _success_rate(m), room[Tag.CHECKS in m.tags]) for m in found]


def _steps_of(m: Memory) -> set[str]:
    """A procedure's commands, as `bare` shows them (an empty set never counts as listed)."""
    steps = {bare(s) for s in strings(m.details.get("steps")) or [m.details.get("command")]}
    return steps - {""} or {m.id}


def _commands_line(kept: list[KeptCommand]) -> Line:
    """The checks and builds of all the sessions, each command once, with how many sessions ran it."""
    text = "- Checks and builds that passed here (sessions that ran each):"
    for k in kept:
        note = f" {k.note}" if k.note else ""
        piece = f" `{inline(k.command, 160)}` ({k.purpose}, {len(k.sessions)}){note};"
        if len(text) + len(piece) > CHECKS_CHARS:
            break
        text += piece
    shown = [k.newest for k in kept if k.newest]
    newest = max(shown, key=written_order(shown))
    return Line(text.rstrip(";") + "\n", newest.id)


def _success_rate(m: Memory) -> str:
    ok, bad = _count(m, "success_count"), _count(m, "failure_count")
    steps = strings(m.details.get("steps"))
    said = WS.sub(" ", m.content)
    # the steps are worth a line only where the content does not already name each of them
    shown = not all(WS.sub(" ", s).strip() in said for s in steps[:6])
    text = f" Steps: {' → '.join(inline(s, 80) for s in steps[:6])}." if steps and shown else ""
    if ok + bad == 0:
        return text + " (untested)"
    return text + f" ({ok}/{ok + bad} worked)"


def _count(m: Memory, key: str) -> int:
    try:
        return max(int(m.details.get(key, 0) or 0), 0)
    except (TypeError, ValueError):
        return 0

"""Mine tool calls: command sequences that ended in a successful build/test/run become procedures.

A sequence is the meaningful shell steps (scaffold, install, build, test, run... — not exploration
such as ls or cat) of one thread since its previous verifying success, ending in a verifying command
that succeeded. Repeated attempts of the same kind of step keep only the last (the one that worked).
Failures of the final command on the way count against the procedure.
"""

from __future__ import annotations

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import TITLE_CHARS, Tag
from cairn.pipeline.models import Candidate
from cairn.pipeline.reading.commands import VERIFYING, is_learnable_command
from cairn.pipeline.reading.failures import real_failure
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.shell import ShellCall

MIN_STEPS = 2
MAX_STEPS = 8


def mine_procedures(reading: SessionReading) -> list[Candidate]:
    out: list[Candidate] = []
    for thread in (False, True):
        calls = [
            c
            for c in reading.thread_calls(thread)
            if c.category and is_learnable_command(c.command) and c.result is not None
        ]
        out.extend(_sequences(calls))
    return out


def _sequences(calls: list[ShellCall]) -> list[Candidate]:
    out = []
    steps: list[ShellCall] = []
    failures: dict[str, int] = {}
    for c in calls:
        if c.failed:
            if real_failure(c):
                failures[c.key] = failures.get(c.key, 0) + 1
            continue
        if steps and steps[-1].category == c.category and c.category not in VERIFYING:
            steps[-1] = c  # a retried setup step: the last attempt is the one that worked
        elif not steps or steps[-1].key != c.key:
            steps.append(c)
        if c.category in VERIFYING:
            if len(steps) >= MIN_STEPS:
                out.append(_procedure(steps[-MAX_STEPS:], failures.get(c.key, 0)))
            steps, failures = [], {}
    return out


def _procedure(steps: list[ShellCall], failures: int) -> Candidate:
    commands = [s.key for s in steps]
    numbered = " ".join(f"{i}. `{cmd}`" for i, cmd in enumerate(commands, 1))
    last = steps[-1]
    return Candidate(
        kind=MemoryKind.PROCEDURE,
        title=f"Steps to {last.category}: {last.key}"[:TITLE_CHARS],
        content=f"Steps that worked, ending with a successful {last.category}: {numbered}",
        tags=[Tag.PROCEDURE, last.category or Tag.COMMAND],
        confidence=0.6,
        details={"steps": commands, "success_count": 1, "failure_count": failures, "mined": True},
        line_start=steps[0].call.line_no,
        line_end=(last.result or last.call).last_line,
    )

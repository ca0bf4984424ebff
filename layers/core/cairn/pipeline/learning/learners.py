"""The session-level learners: what only the whole session shows, each a function of its one reading.

The chunk extractors (`rules`, `llm`) see a slice of the session; these see all of it. This is the one
list of them. They come in two batches because consolidation takes them in two (see
`stages.consolidate`): what the session shows whole goes in with the chunks' candidates; what its
commands came to over its whole length (procedures it worked out, errors paired with their fixes
across chunks, errors it never fixed) goes in after the transcript excerpts.
"""

from __future__ import annotations

from collections.abc import Callable

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import TITLE_CHARS, Tag
from cairn.pipeline.learning import signals
from cairn.pipeline.learning.manifests import manifest_facts
from cairn.pipeline.learning.person import answers
from cairn.pipeline.learning.procedures import mine_procedures
from cairn.pipeline.learning.reports import reported_facts
from cairn.pipeline.learning.rules import errors_and_fixes
from cairn.pipeline.models import Candidate
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.shell import shown_command

Learner = Callable[[SessionReading], list[Candidate]]


def manifests(reading: SessionReading) -> list[Candidate]:
    """The tasks of the project's manifests: those the session read, those the capture hook sent."""
    return manifest_facts(reading.events, reading.project_files)


def answered(reading: SessionReading) -> list[Candidate]:
    """What the person chose when the agent put a question to them."""
    return answers(reading.events)


def fixes(reading: SessionReading) -> list[Candidate]:
    """An error in one chunk and its fix in a later one, paired over the whole session (a pair found
    within one chunk comes out identical and merges with itself)."""
    return errors_and_fixes(reading.events, list(reading.shell_calls), reading.checkouts)


def unresolved(reading: SessionReading) -> list[Candidate]:
    """An episode per command whose last run failed for real."""
    return [
        Candidate(
            kind=MemoryKind.EPISODE,
            content=f"`{shown_command(u['command'])}` still fails with: {u['error']}",
            title=f"Unresolved: `{shown_command(u['command'])}`"[:TITLE_CHARS],
            tags=[Tag.ERROR, Tag.UNRESOLVED],
            confidence=0.6,
            details={
                "outcome": "unresolved",
                "error": u["error"],
                "command": u["command"],
                "attempts": u["attempts"],
            },
            line_start=u["line_start"],
            line_end=u["line_end"],
        )
        for u in reading.unresolved
    ]


# with the chunks' candidates: checks, git activity and history, plans, summaries, todos, how the last
# request ended, the values the agent reported of work a tool confirmed, the manifests' tasks, what the
# person answered the agent's questions
WHOLE_SESSION: tuple[Learner, ...] = (
    signals.checks,
    signals.git_activity,
    signals.git_history,
    signals.plans,
    signals.summaries,
    signals.todos,
    signals.outcome,
    reported_facts,
    manifests,
    answered,
)
# after the excerpts: what the session's commands came to over its whole length
OVER_ITS_LENGTH: tuple[Learner, ...] = (mine_procedures, fixes, unresolved)


def learn(reading: SessionReading, learners: tuple[Learner, ...]) -> list[Candidate]:
    return [c for learner in learners for c in learner(reading)]

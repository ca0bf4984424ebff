"""The words the learning pipeline writes and the services read back: a session's status, the tags on
memories, the phrases a handoff is read by, and the limits both sides hold to.

One home for each, below both: the pipeline (`cairn.pipeline`) writes them, `services/context/`,
`services/uploads.py`, the CLI and the web UI read them. A tag or status spelt anywhere else is a
second copy of the rule.
"""

from __future__ import annotations

from enum import StrEnum


class SessionStatus(StrEnum):
    """received -> processing -> learned | failed. A StrEnum: stored and compared as its plain string."""

    RECEIVED = "received"
    PROCESSING = "processing"
    LEARNED = "learned"
    FAILED = "failed"


UNFINISHED_STATUSES = frozenset({SessionStatus.RECEIVED, SessionStatus.PROCESSING})
DONE_STATUSES = (SessionStatus.LEARNED, SessionStatus.FAILED)


class Tag:
    """Tags the pipeline puts on the memories it learns, that recall and the context block read."""

    CHECKS = "checks"  # the commands a project verifies its work with (one procedure)
    COMMAND = "command"  # learned from a command that ran
    ERROR = "error"  # an episode of a failed command
    UNRESOLVED = "unresolved"  # ... that never stopped failing in its session
    FIXED = "fixed"
    RESOLVED = "resolved"
    OPEN = "open"  # an episode of what was left to do: unfinished todos, a summary's pending work
    TAKEN_UP = "taken-up"  # a summary's pending work the session went on with: history, not a to-do
    SUMMARY = "summary"  # a section of the model-written summary of a session
    RETOLD = "retold"  # a summary's section that retells the conversation: recall's source, not the block's
    PLAN = "plan"  # a section of a plan the user handed over or approved
    TODO = "todo"
    PROCEDURE = "procedure"
    VERSIONS = "versions"  # the package versions an installer reported
    TRANSCRIPT = "transcript"  # a transcript excerpt
    PROMOTED = "promoted"  # a team-wide memory promoted from several projects'
    REPORTED = "reported"  # a value the agent reported in its account of work a tool confirmed
    GIT = "git"  # a session's git activity (its branches and commits)
    # a rule the person stated as an obligation ("must", "tem que"): a standing rule, or what the task at
    # hand required; in one session's story the two read alike
    OBLIGATION = "obligation"
    # what the person chose when the agent put a question to them: it decides the task it was asked in
    ANSWER = "answer"


ERROR_TAGS = frozenset({Tag.ERROR, Tag.UNRESOLVED})
RESOLVED_TAGS = frozenset({Tag.RESOLVED, Tag.FIXED})
# how a memory was learned, not what it is: not worth showing an agent as a tag
SOURCE_TAGS = frozenset({Tag.COMMAND, Tag.PLAN, Tag.SUMMARY, Tag.TRANSCRIPT, Tag.OBLIGATION, Tag.ANSWER})

STILL_FAILING = "Still failing:"  # how a handoff names the commands it left failing

# limits both sides hold to
TITLE_CHARS = 300  # a memory's title: what the API accepts, where the pipeline cuts the titles it writes

"""Which of a session's failed commands were real errors, which a later run made good, which never did.

One test of a real failure (`real_failure`) serves every reader: the learners pairing errors with
fixes, mined procedures counting failures against themselves, the reflection and the handoff.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.pipeline.reading.commands import is_learnable_command, is_probe
from cairn.pipeline.reading.shell import Resolutions, ShellCall, first_error_line, is_agent_mechanics_error

MAX_UNRESOLVED = 8


def real_failure(call: ShellCall) -> bool:
    """The command failed, and the failure says something of the project: not the agent misusing its own
    tool (`<tool_use_error>`, a bare "Error"), and not a look around (`ls x`, `git rev-parse`) that
    found nothing, which no later success fixes."""
    return call.failed and not is_probe(call.command) and not is_agent_mechanics_error(call.result.text)  # type: ignore[union-attr]


def unresolved_errors(calls: Sequence[ShellCall]) -> list[dict[str, Any]]:
    """Commands whose last run in the session failed for real."""
    last: dict[str, ShellCall] = {}
    attempts: dict[str, int] = {}
    resolutions = Resolutions()
    for c in calls:
        if c.ok:  # `mise trust && mise run fmt` working resolves an earlier failed `mise run fmt`
            for failure in (r.failure for r in resolutions.succeeded(c)):
                last[failure.key] = c
        if c.result is None or not is_learnable_command(c.command):
            continue
        if c.failed and not real_failure(c):
            continue
        attempts[c.key] = attempts.get(c.key, 0) + (1 if c.failed else 0)
        last[c.key] = c
        if c.failed:
            resolutions.failed(c)
    out = []
    for key, c in last.items():
        if c.failed:
            out.append(
                {
                    "command": key,
                    "error": first_error_line(c.result.text),  # type: ignore[union-attr]
                    "attempts": attempts[key],
                    "line_start": c.call.line_no,
                    "line_end": c.result.last_line,  # type: ignore[union-attr]
                }
            )
    return out[:MAX_UNRESOLVED]


def errors_fixed(calls: Sequence[ShellCall]) -> list[str]:
    """The commands that failed for real and a later run made good, in the order they were fixed."""
    fixed: list[str] = []
    resolutions = Resolutions()
    for c in calls:
        if real_failure(c):
            resolutions.failed(c)
        elif c.ok:
            fixed += [r.failure.key for r in resolutions.succeeded(c) if r.failure.key not in fixed]
    return fixed

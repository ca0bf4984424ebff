"""Which of a session's failed commands were real errors, which a later run made good, which never did.

One test of a real failure (`real_failure`) serves every reader: the learners pairing errors with
fixes, mined procedures counting failures against themselves, the reflection and the handoff.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from cairn.pipeline.reading.commands import ends_in_search, is_learnable_command, is_probe
from cairn.pipeline.reading.shell import (
    NAMED_ERROR,
    SAYS_ERROR,
    Resolutions,
    ShellCall,
    first_error_line,
    is_agent_mechanics_error,
    ran_elsewhere,
)

MAX_UNRESOLVED = 8


def real_failure(call: ShellCall) -> bool:
    """The command failed, and the failure says something of the project: not the agent misusing its own
    tool (`<tool_use_error>`, a bare "Error"), not a look around (`ls x`, `git rev-parse`) that found
    nothing, and not a search that matched nothing (`found_nothing`): no later success fixes those."""
    if not call.failed or is_probe(call.command):
        return False
    text = call.result.text  # type: ignore[union-attr]
    return not is_agent_mechanics_error(text) and not found_nothing(call.command, text)


# how agents report a command's status: "Exit code 1" (Claude Code), "exit code: 1", "Exited with code 1"
_EXIT_STATUS = re.compile(r"^\W*exit(?:ed)?(?: with)?(?: status| code)?\W*(\d+)\W*$", re.I | re.M)

_ERROR_NAME = re.compile(r"[a-z](?:Error|Exception)\b|\b(?:fatal|panic)\b")  # `(CompileError)`, `fatal:`


def found_nothing(command: str, output: str) -> bool:
    """A line whose last step is a search, ended with status 1 and no error said: nothing matched.
    That is an answer ("not in the log"), not a failure; status 2 and up, or an error line, still are."""
    if not ends_in_search(command):
        return False
    statuses = _EXIT_STATUS.findall(output)
    if statuses and statuses[-1] != "1":
        return False
    said = _EXIT_STATUS.sub(" ", output)
    return not any(p.search(said) for p in (SAYS_ERROR, NAMED_ERROR, _ERROR_NAME))


def unresolved_errors(calls: Sequence[ShellCall]) -> list[dict[str, Any]]:
    """Commands whose last run in the session failed for real, and that no later line ran from the
    right folder or program (`shell.ran_elsewhere`): one build spelled three wrong ways, then run from
    its folder, left nothing failing."""
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
    worked = [c for c in calls if c.ok]
    out = []
    for key, c in last.items():
        if c.failed and not any(
            w.call.line_no > c.call.line_no and ran_elsewhere(w.command, c.command) for w in worked
        ):
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

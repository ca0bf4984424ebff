"""What git said of unfinished work at the end of a session: uncommitted changes, unpushed commits,
untracked files, less what a later commit or push settled.

Read from the session's last `git status` (any wrapper that prints git's words: `rtk git status`,
`--short --branch`). The handoff says it to the next session, and the session's git activity episode
keeps it after the handoff is delivered, so "was it pushed?" still has an answer weeks later.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.pipeline.reading.shell import ShellCall

_GIT_STATE = re.compile(
    r"(ahead \d+|behind \d+|Your branch is (?:ahead|behind)|have diverged"
    r"|Changes (?:not staged|to be committed)|Untracked files|nothing to commit"
    r"|Your branch is up to date|Staged: \d+ files|Modified: \d+ files|Untracked: \d+ files)",
    re.I,
)


def git_state(calls: Sequence[ShellCall]) -> str | None:
    """What the session's last `git status` said of uncommitted or unpushed work, in git's words,
    less what a later commit or push settled (a commit leaves untracked files and unpushed commits)."""
    settled: list[str] = []
    for c in reversed(calls):
        if not c.ok:
            continue
        if re.search(r"\bgit (?:stash|reset|checkout|switch|rebase|merge)\b", c.command):
            return None  # the work changed shape after the last status: what it said is stale
        settled += [verb for verb in ("commit", "push") if re.search(rf"\bgit {verb}\b", c.command)]
        if c.result is not None and "git status" in c.command:
            lines = _status_lines(c.result.text, settled)
            if lines and settled:
                lines.append(_AFTERWARDS[frozenset(settled)])
            return "; ".join(lines)[:GIT_STATE_CHARS] or None
    return None


GIT_STATE_CHARS = 400
_AFTERWARDS = {  # what the session did after that status, in words a reader cannot misread
    frozenset({"commit"}): "then committed, not pushed",
    frozenset({"push"}): "then pushed",
    frozenset({"commit", "push"}): "then committed and pushed",
}
_SETTLED_BY = {
    "commit": re.compile(r"Changes to be committed|\bStaged:"),
    "push": re.compile(r"ahead \d+|Your branch is ahead|have diverged", re.I),
}
_UNTRACKED_HEADER = re.compile(r"Untracked", re.I)


def _status_lines(text: str, settled: list[str]) -> list[str]:
    """git's state lines, and the untracked paths it listed (`?? path`, or indented under its header)."""
    lines, untracked, listing = [], [], False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("?? "):
            untracked.append(line[3:])
        elif listing and raw[:1] in (" ", "\t") and line and not line.startswith(("(", "...")):
            untracked.append(line)
        listing = bool(_UNTRACKED_HEADER.search(line)) or (listing and raw[:1] in (" ", "\t"))
        if _GIT_STATE.search(line) and not any(_SETTLED_BY[v].search(line) for v in settled):
            lines.append(line)
    if untracked:
        lines.append("untracked: " + ", ".join(untracked[:6]))
    return list(dict.fromkeys(lines))

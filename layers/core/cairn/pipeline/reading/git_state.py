"""What git said of unfinished work at the end of a session: uncommitted changes, unpushed commits,
untracked files, less what a later commit or push settled.

Read from the session's last `git status` (any wrapper that prints git's words: `rtk git status`,
`--short --branch`). The handoff says it to the next session, and the session's git activity episode
keeps it after the handoff is delivered, so "was it pushed?" still has an answer weeks later.

Two readings serve a later session's judgement of this one's unfinished work:
- `uncommitted_edits`: the files the session edited in its checkout after its last commit;
- `tree_state`: the paths its last plain `git status` of its own checkout listed as not committed. A file
  an earlier session left uncommitted that such a status does not list was committed (or put back)
  between the two sessions, whoever did it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import ShellCall, edited_paths, in_checkout, succeeded_edits

# git's line for a commit it made: "[main abc1234] message", "[main (root-commit) abc1234] message"
COMMIT_LINE = re.compile(r"^\[([^\]\s]+)(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$", re.M)

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
        # in one command line (`git add . && git status && git commit … && git status`) only what
        # ran after its last status came after what that status said
        after = c.command[c.command.rfind("git status") :] if "git status" in c.command else c.command
        if re.search(r"\bgit (?:stash|reset|checkout|switch|rebase|merge)\b", after):
            return None  # the work changed shape after the last status: what it said is stale
        settled += [verb for verb in ("commit", "push") if re.search(rf"\bgit {verb}\b", after)]
        if c.result is not None and "git status" in c.command:
            lines = _status_lines(last_status_output(c.command, c.result.text), settled)
            if lines and settled:
                lines.append(_AFTERWARDS[frozenset(settled)])
            return "; ".join(lines)[:GIT_STATE_CHARS] or None
    return None


GIT_STATE_CHARS = 400
# where a status's output begins, in git's long and short words (`## main...origin/main`)
_STATUS_START = re.compile(r"^(?:On branch |HEAD detached |Not currently on any branch|## )", re.M)


def last_status_output(command: str, text: str) -> str:
    """What the last `git status` of a command line printed: a line that ran several (before and after
    a commit) printed each, and only the last is the state it left."""
    if command.count("git status") < 2:
        return text
    starts = list(_STATUS_START.finditer(text))
    return text[starts[-1].start() :] if starts else text


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


# --- the files a session left uncommitted, and the tree a later session found ---------------------------
MAX_TREE_PATHS = 200  # a status listing more is kept as incomplete: it can show nothing clean
# `git status` with options only: a pathspec (`git status src/`) lists part of the tree
_PLAIN_STATUS = re.compile(r"\bgit\s+status((?:\s+-[\w=-]+)*)\s*(?:$|&&|;|\||\))")
_ELSEWHERE = re.compile(r"""^\s*cd\s+["']?([^&;|"']+?)["']?\s*(?:&&|;)""")
_STASH = re.compile(r"\bgit\s+stash\b(?:\s+(?P<verb>push|save|pop|apply|drop|list|show|clear|branch)\b)?")
_STATUS_WORDS = re.compile(r"On branch|HEAD detached|nothing to commit|^##|Changes |Untracked|Unmerged", re.M)
_SHORT_ENTRY = re.compile(r"^[ MADRCUT?!]{2} (?P<path>\S.*)$")
_LONG_ENTRY = re.compile(
    r"^(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|both deleted"
    r"|added by us|added by them|deleted by us|deleted by them):\s+(?P<path>\S.*)$"
)
_SECTION = re.compile(
    r"Changes (?:not staged|to be committed)|Untracked files|Unmerged paths"
    r"|\b(?:Staged|Modified|Untracked|Deleted):",
    re.I,
)
_MORE = re.compile(r"^(?:\.\.\.|…)\s*(?:and\s+)?\+?\d+\s+more\b", re.I)
_AHEAD = re.compile(r"ahead \d+|Your branch is ahead|have diverged", re.I)


@dataclass(frozen=True, slots=True)
class Tree:
    """A session's checkout as its last plain `git status` listed it: the paths not committed (as git
    printed them), whether the branch was ahead of its upstream, and whether the listing was whole."""

    dirty: tuple[str, ...]
    ahead: bool
    complete: bool = True

    def lists(self, path: str) -> bool:
        """Whether `path` (relative to a checkout) is among the listed paths: the same file however
        deep the two folders it was named from (`cmd/a.go` is `go/cmd/a.go` seen from `go/`), or under
        a listed folder (`?? migrations/`). In doubt it is listed: that only keeps an item open."""
        if not self.complete:
            return True
        want = _plain(path)
        for listed in self.dirty:
            got = _plain(listed)
            if not got:
                continue
            if got.endswith("/"):
                if (want + "/").startswith(got) or f"/{got}" in f"/{want}/":
                    return True
            elif want == got or want.endswith("/" + got) or got.endswith("/" + want):
                return True
        return False


def _plain(path: str) -> str:
    path = path.strip().strip('"')
    while path.startswith(("./", "../")):
        path = path.split("/", 1)[1]
    return path


def tree_state(calls: Sequence[ShellCall], cwd: str | None) -> Tree | None:
    """What the session's last plain `git status` of its own checkout listed as not committed; None when
    it ran none, or stashed work before it (stashed files are not committed, yet no status lists them)."""
    home = posixpath.normpath(cwd) if cwd and cwd.startswith("/") else None
    for i in range(len(calls) - 1, -1, -1):
        c = calls[i]
        m = next(reversed(list(_PLAIN_STATUS.finditer(c.command))), None)  # the last status of the line
        if not c.ok or c.result is None or m is None or not _in_checkout(c, home):
            continue
        if _stashed_away(calls[:i]):
            return None
        text = last_status_output(c.command, c.result.text or "")
        return _tree(text, short=bool(re.search(r"\s(?:-s|--short|--porcelain)", m.group(1))))
    return None


def _stashed_away(calls: Sequence[ShellCall]) -> bool:
    """Whether work stashed by these calls was still stashed after them (a stash later popped is back)."""
    depth = 0
    for c in calls:
        for m in _STASH.finditer(c.command if c.ok else ""):
            verb = m["verb"]
            if verb in (None, "push", "save"):
                depth += 1
            elif verb in ("pop", "apply", "branch"):
                depth = max(depth - 1, 0)
    return depth > 0


def _in_checkout(c: ShellCall, home: str | None) -> bool:
    """Whether a call ran in the session's own checkout, not in a folder it `cd`-ed or pointed to."""
    raw = c.call.tool_input
    where = raw.get("workdir") if isinstance(raw, dict) else None
    if not isinstance(where, str) and (m := _ELSEWHERE.match(c.command)):
        where = m.group(1).strip()
    if not isinstance(where, str) or where in (".", ""):
        return True
    return home is not None and where.startswith("/") and posixpath.normpath(where) == home


def _tree(text: str, short: bool) -> Tree | None:
    dirty: list[str] = []
    section, whole = False, True
    for raw in text.splitlines():
        line = raw.strip()
        if _MORE.match(line):  # a wrapper's cut list ("... +3 more"): what it left out may be dirty
            whole = False
            continue
        if (m := _SHORT_ENTRY.match(raw)) and not raw.startswith("##"):
            dirty += [p.strip() for p in m["path"].split(" -> ")]
            continue
        if _SECTION.search(line) and not raw[:1].isspace():
            section = True
            continue
        if section and raw[:1].isspace() and line and not line.startswith("("):
            entry = _LONG_ENTRY.match(line)
            dirty += [p.strip() for p in (entry["path"] if entry else line).split(" -> ")]
        elif line and not raw[:1].isspace():
            section = False
    if not dirty and not short and not _STATUS_WORDS.search(text):
        return None  # not git's words: nothing to read a clean tree from
    listed = tuple(dict.fromkeys(dirty))
    return Tree(listed[:MAX_TREE_PATHS], bool(_AHEAD.search(text)), whole and len(listed) <= MAX_TREE_PATHS)


def uncommitted_edits(
    events: Sequence[EventDoc], calls: Sequence[ShellCall], roots: tuple[str, ...]
) -> tuple[str, ...]:
    """The files the session edited in its checkout (relative to it) after the last commit git reported
    making; a file outside every checkout (an agent's own notes) is no work a commit could hold."""
    last_commit = max(
        (
            c.result.seq  # the order of the session's events
            for c in calls
            if c.ok and c.result is not None and COMMIT_LINE.search(c.result.text or "")
        ),
        default=-1,
    )
    out: list[str] = []
    for e in succeeded_edits(events):
        if e.seq > last_commit:
            for path in edited_paths(e):
                relative = in_checkout(path, roots) if path.startswith("/") else _plain(path)
                if relative and not relative.startswith("/") and relative not in out:
                    out.append(relative)
    return tuple(out)

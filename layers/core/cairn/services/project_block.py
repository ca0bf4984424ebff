"""What the session-start block keeps of a project's life, not of its last session alone.

A project's memories come from many sessions. Read one by one, the same build is a "procedure" five
times over, an error a later session got past still reads as unresolved, and a command run once to
look at a server reads as a proven procedure. The rules here are generic, read from the memories'
own sessions and counts, never from a project's words:

- `latest_session`: the session the newest memory came from; what still failed at its end is
  unresolved, what failed in an older one was left behind by the sessions that came after it;
- `kept_commands`: the checks and builds the project's sessions ran and passed, one command once,
  with the sessions that ran it; a command is kept when it has a repeatable purpose (run in two
  sessions or more, or more than once, or a build/test/deploy step known by its tool);
- `repeatable`: whether a procedure that is not one command earns a line (it worked more than once,
  several sessions confirm it, or it is a build/test/deploy step's fix);
- `confirmations` and `Salience`: how many sessions say a memory, and the seam through which a
  score of use and age (the consolidation pass's) orders each section.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cairn.domain.models import Memory
from cairn.domain.vocabulary import Tag

# how a memory scores for the block at a moment: higher first (the consolidation pass's salience plugs in)
Salience = Callable[[Memory, datetime], float]
VERIFYING = frozenset({"build", "test", "typecheck", "run", "deploy"})  # the pipeline's step kinds
MAX_COMMANDS = 8
FIX, FIX_RUN = "fix", "run `"  # how the pipeline tags an error's fix, and words a step it ran

_SPLIT = re.compile(r"\s*(?:&&|;|\|\|)\s*")
_SHOWN_HOW = re.compile(r"\s+(?:\d?>&\d|\d?>\s*/dev/null)|\s+\|\s+(?:tail|head)\b.*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=\S*$")
_MOVES = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "sleep", "export", "source", "."})
# "- build: `go build ./...` (runs `…`)", a line of a checks memory
_CHECK_LINE = re.compile(r"^- (\w[\w -]*): `(.+?)`(.*)$", re.M)
# programs that talk to another machine: a look at a server once is no check of the project's code
REMOTE_PROGRAMS = frozenset(
    {"curl", "wget", "ssh", "scp", "rsync", "nc", "ncat", "telnet", "ping", "http", "xh"}
)


def confirmations(m: Memory) -> int:
    """How many sessions say this memory: the consolidation pass's evidence when it has counted it, else 1."""
    sessions = m.details.get("sessions")
    if isinstance(sessions, list | tuple) and sessions:
        return len(sessions)
    for key in ("session_count", "confirmations"):
        try:
            if int(m.details.get(key) or 0) > 0:
                return int(m.details[key])
        except (TypeError, ValueError):
            continue
    return 1


def default_salience(m: Memory, now: datetime) -> float:  # noqa: ARG001 - the seam's signature
    """Until a pass scores use and age, what several sessions confirm comes first."""
    return float(confirmations(m))


def written_order(memories: Iterable[Memory]) -> Callable[[Memory], tuple[datetime, int, int]]:
    """A sort key for `memories`, oldest first and the same on every run: their session's time (when
    its newest memory was said: `Memory.valid_from`, the session's own time for what the pipeline
    learned, whenever it got to it), then where the session said them, then their place among the
    sections of one message. One session's memories are written within moments of each other, in
    whatever order the pipeline's workers finish, so their own times (or their ids, which carry them)
    order them differently on each run; their place in the session does not."""
    sessions: dict[str, datetime] = {}
    for m in memories:
        sid = m.provenance.session_id or m.id
        if sid not in sessions or m.valid_from > sessions[sid]:
            sessions[sid] = m.valid_from

    def key(m: Memory) -> tuple[datetime, int, int]:
        line = m.provenance.line_end or m.provenance.line_start or 0
        try:
            section = max(int(m.details.get("section", 0) or 0), 0)
        except (TypeError, ValueError):
            section = 0
        return sessions.get(m.provenance.session_id or m.id, m.valid_from), line, -section

    return key


def latest_session(memories: Iterable[Memory]) -> str | None:
    newest = max(memories, key=lambda m: (m.valid_from, m.created_at), default=None)
    return newest.provenance.session_id if newest is not None else None


def normal_command(step: str) -> str:
    """A command as the project runs it, whatever the session's shell made of it: without how its
    output was shown (`2>&1 | tail -5`), and with an installed program by name (`/usr/local/go/bin/go`
    and `./node_modules/.bin/tsc` are `go` and `tsc`). The project's own script keeps its path:
    `deploy.sh release` is not what runs `./deploy.sh release`."""
    words = _SHOWN_HOW.sub("", step).split()
    head = next((i for i, w in enumerate(words) if not _ASSIGNMENT.match(w)), None)
    if head is not None and _installed(words[head]):
        words[head] = words[head].rstrip("/").rsplit("/", 1)[-1]
    return " ".join(words)


def _installed(path: str) -> bool:
    """A program named by where it was installed: an absolute path, or a folder of programs (`bin`,
    `.bin`) in the project (`.venv/bin/pytest`)."""
    folder, _, name = path.rstrip("/").rpartition("/")
    if not (folder and name):
        return False
    return path.startswith(("/", "~")) or folder.rsplit("/", 1)[-1] in _BIN_FOLDERS


_BIN_FOLDERS = frozenset({"bin", ".bin", "sbin", "Scripts"})


def command_steps(command: str) -> list[str]:
    """The steps of a line that do the work: not moving around (`cd go`), printing (`echo ok`) or
    setting the environment for what follows (`PATH=…`)."""
    out = []
    for step in _SPLIT.split(command or ""):
        words = step.split()
        if not words or words[0] in _MOVES or all(_ASSIGNMENT.match(w) for w in words):
            continue
        out.append(normal_command(step))
    return [s for s in out if s]


@dataclass(slots=True)
class KeptCommand:
    command: str
    purpose: str
    sessions: set[str] = field(default_factory=set)
    runs: int = 0
    named: bool = False  # a build/test/deploy step known by its tool (the pipeline said its kind)
    newest: Memory | None = None
    note: str = ""  # what the newest run said it runs ("(runs `vitest run`)")

    @property
    def repeatable(self) -> bool:
        local = program(self.command) not in REMOTE_PROGRAMS
        return len(self.sessions) >= 2 or self.runs >= 2 or self.named or local


_WRAPPERS = frozenset({"sudo", "time", "nice", "env", "command", "exec", "nohup"})


def program(command: str) -> str:
    """The program a command runs, past its environment and wrappers (`timeout 10 curl …` runs curl)."""
    words = command.split()
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS or words[0] == "timeout"):
        timed = words[0] == "timeout" and len(words) > 1 and words[1][:1].isdigit()
        words = words[2:] if timed else words[1:]
    return words[0].rsplit("/", 1)[-1] if words else ""


def _single(m: Memory) -> str | None:
    """The step kind of a one-command procedure ("Build with `go build ./...`"), or None."""
    category = str(m.details.get("category") or "")
    return category if m.details.get("command") and category in VERIFYING else None


def is_command_memory(m: Memory) -> bool:
    """A project's checks, or one command that worked: what `kept_commands` merges into one line."""
    return Tag.CHECKS in m.tags or _single(m) is not None


def kept_commands(procedures: Sequence[Memory]) -> list[KeptCommand]:
    """The commands the project's checks and one-command procedures ran, each once, most sessions first."""
    kept_ones = [k for k in _one_per_check(passed_commands(procedures)) if k.repeatable]
    order = written_order(k.newest for k in kept_ones if k.newest)
    newest_first = sorted(kept_ones, key=lambda k: order(k.newest), reverse=True)  # type: ignore[arg-type]
    return sorted(newest_first, key=lambda k: -len(k.sessions))[:MAX_COMMANDS]


_BARE_SWITCH = re.compile(r"--?[A-Za-z][\w-]*")


def _check_of(command: str) -> tuple[str, ...]:
    """A command without its bare switches: `go build -v ./cmd/x` and `go build ./cmd/x` run one check,
    shown louder or quieter (a switch's value, the `out` of `-o out`, stays, so that one is another check);
    its words after the program in any order (`xcodebuild build -project P -quiet` is `xcodebuild
    -project P -quiet build`: a build tool reads its action and its switches wherever they stand)."""
    words = [w for w in command.split() if not _BARE_SWITCH.fullmatch(w)]
    return (*words[:1], *sorted(words[1:]))


def _one_per_check(found: list[KeptCommand]) -> list[KeptCommand]:
    """Each check of the project's code once: a command that is another with bare switches added or
    left off is that command, shown as the sessions ran it most; its sessions and runs count for it."""
    groups: dict[tuple[str, ...], list[KeptCommand]] = {}
    for k in found:
        # a request to another machine is what its switches make it (`curl -X POST -d …`): never merged
        remote = program(k.command) in REMOTE_PROGRAMS
        groups.setdefault((k.command,) if remote else _check_of(k.command), []).append(k)
    out = []
    for same in groups.values():
        first = max(same, key=lambda k: (len(k.sessions), k.runs))
        for k in same:
            if k is not first:
                first.sessions |= k.sessions
                first.runs += k.runs
                first.named = first.named or k.named
        out.append(first)
    return out


def passed_commands(procedures: Sequence[Memory]) -> list[KeptCommand]:
    """Every command the checks and one-command procedures say passed, once, with its sessions."""
    found: dict[str, KeptCommand] = {}
    for m in sorted(procedures, key=written_order(procedures)):
        if Tag.CHECKS in m.tags:
            lines = _CHECK_LINE.findall(m.content)
            lines = lines or [("check", str(s), "") for s in m.details.get("steps") or []]
        elif kind := _single(m):
            # a line of several steps was named by one of them, which leads it (`go build … && scp …`)
            lines = [(kind, first, "") for first in command_steps(str(m.details["command"]))[:1]]
        else:
            continue
        for purpose, command, note in lines:
            steps = command_steps(command)
            for step in steps:
                kept = found.setdefault(step, KeptCommand(step, purpose))
                # the sessions the consolidation pass folded into it ran it too
                said = m.details.get("sessions")
                kept.sessions.update(
                    [str(x) for x in said]
                    if isinstance(said, list) and said
                    else [m.provenance.session_id or m.id]
                )
                ok = m.details.get("success_count")
                kept.runs += int(ok) if isinstance(ok, int) and ok > 0 else 1
                kept.named = kept.named or _single(m) is not None
                kept.newest = m
                if len(steps) == 1:
                    kept.note = note.strip() or kept.note
    return list(found.values())


def worked_past(error: Memory, passed: Sequence[KeptCommand]) -> bool:
    """An error its session got past: the same step on the same target passed in that session, run
    from another directory or through another path to its program (`go build ./go/cmd/x` failing
    from the wrong folder, `go build ./cmd/x` passing from the right one)."""
    failed = [normal_command(s) for s in command_steps(str(error.details.get("command") or ""))]
    session = error.provenance.session_id
    ran = [k.command for k in passed if session in k.sessions]
    return bool(failed) and all(any(same_step(f, r) for r in ran) for f in failed)


def same_step(a: str, b: str) -> bool:
    """Two steps as `normal_command` gives them run one command on one target, seen from two folders:
    the same program and words, a path of one naming the other's folder from one level up or more."""
    x, y = a.split(), b.split()
    if len(x) != len(y) or program(a) != program(b):
        return False
    return all(u == v or _same_path(u, v) for u, v in zip(x, y, strict=True))


def _same_path(a: str, b: str) -> bool:
    """`./go/cmd/x/` and `./cmd/x` name one folder seen from two places (one ends with the other)."""
    u, v = (p.removeprefix("./").rstrip("/") for p in (a, b))
    if "/" not in u + v or not u or not v:
        return False
    return u.endswith("/" + v) or v.endswith("/" + u)


def repeatable(m: Memory) -> bool:
    """A procedure with a purpose the next session has too: it worked more than once, several sessions
    say it, or it fixes a build/test/deploy step; not a one-off look at a server that happened to work."""
    try:
        ok = int(m.details.get("success_count") or 0)
    except (TypeError, ValueError):
        ok = 0
    if m.pinned or ok >= 2 or confirmations(m) >= 2:
        return True
    # a fix made of edits changed the code once: history; a fix that runs something is a way round
    # that holds next time ("go: command not found": run `/usr/local/go/bin/go build` instead)
    steps = m.details.get("steps") or []
    runs = not isinstance(steps, list) or any(str(s).startswith(FIX_RUN) for s in steps)
    return bool(VERIFYING.intersection(m.tags)) and (FIX not in m.tags or runs)


# --- the project's current facts ------------------------------------------------------------------
RECENCY_HALF = 3.0  # a fact of the session three sessions back weighs half as much as the latest's
SUPPORT_FULL = 3  # the value named by this many other sessions: full support
ASKED_FULL = 2  # words of the person's request a statement says: it is what they asked for
COMMITTED = 0.5  # the work was committed or pushed: kept, not tried
# a value that configures something (a URL, a host, a path, a number, a colour, a command), not only a
# name in the code (`parse_rows`)
_SETTING = re.compile(r"[/.:#=\s]|\d")
# a name made of several words (`_ai_hint`, `device-tcp`, `MAP_SERVER_HOST`): a field, a type, a variable
_NAME = re.compile(r"^[a-z_$@][\w$@]*[_-]\w[\w-]*$", re.I)
_RULE = re.compile(r"\b(?:always|never|must)\b", re.I)  # a rule the project now follows


def session_ages(memories: Iterable[Memory]) -> dict[str, int]:
    """How many of the project's sessions ran after each one (0: the latest). A project's own order of
    sessions, not wall-clock days: a project idle for a month has not aged."""
    newest: dict[str, datetime] = {}
    for m in memories:
        sid = m.provenance.session_id
        if sid and (sid not in newest or m.valid_from > newest[sid]):
            newest[sid] = m.valid_from
    ordered = sorted(newest, key=lambda s: newest[s], reverse=True)
    return {sid: age for age, sid in enumerate(ordered)}


def fact_values(m: Memory) -> set[str]:
    """The settings a fact names (its learner listed its values), compared without case."""
    found = m.details.get("values")
    if not isinstance(found, list | tuple):
        return set()
    shown = (str(v).strip().lower().rstrip("/.") for v in found)
    return {v for v in shown if len(v) >= 4 and _SETTING.search(v)}


def said_before(settings: set[str], shown: set[str]) -> bool:
    """Whether every setting is one a line above showed: the same value, or the start of a longer one
    (`https://x.org/?lat=` of `https://x.org/?lat=LAT&zoom=15`: the longer one says it all)."""
    return bool(settings) and all(any(v == s or s.startswith(v) for s in shown) for v in settings)


def fact_names(m: Memory) -> set[str]:
    """The names of several words a fact lists among its values (`_ai_hint`, `device-tcp`): what a
    change set or renamed, or what the person asked for, is the project's current setting as much as
    a host is (the `_ai_hint` field now carries the warning); a name read in passing is not."""
    found = m.details.get("values")
    if not isinstance(found, list | tuple):
        return set()
    shown = (str(v).strip().lower() for v in found)
    return {v for v in shown if len(v) >= 4 and _NAME.match(v) and not _SETTING.search(v)}


def _chose(m: Memory) -> bool:
    """A change or a rule, or what the person asked for in that turn."""
    return bool(m.details.get("changed") or _RULE.search(m.content) or _number(m.details.get("asked")))


def fact_weights(facts: Sequence[Memory], ages: dict[str, int]) -> dict[str, float]:
    """How much each fact deserves a line, each signal worth about one point:

    - a change ("X (was Y)", "from A to B") or a rule ("always", "never", "must"): a decision;
    - a setting it names (a URL, a host, a path, a number with its unit, or a name of several words
      the change or the person's request chose), named by other sessions too (a value, not a name):
      part of how the project works, not a passing remark;
    - what the person asked for in that turn, and work committed or pushed;
    - the project's own recency: what its latest sessions set is what holds now.
    A fact several sessions confirm (the dream pass's evidence) gains half a point per session."""
    sessions: dict[str, set[str]] = {}
    for m in facts:
        for v in fact_values(m):
            sessions.setdefault(v, set()).add(m.provenance.session_id or m.id)
    out = {}
    for m in facts:
        own = m.provenance.session_id or m.id
        settings = fact_values(m)
        others = {s for v in settings for s in sessions.get(v, ()) if s != own}
        # a name the project chose is a setting, though many sessions naming one function is no support
        named = bool(settings) or (_chose(m) and bool(fact_names(m)))
        score = (
            float(bool(m.details.get("changed") or _RULE.search(m.content)))
            + float(named)
            + min(len(others), SUPPORT_FULL) / SUPPORT_FULL
            + min(_number(m.details.get("asked")), ASKED_FULL) / ASKED_FULL
            + COMMITTED * bool(m.details.get("committed"))
            + 0.5 ** (ages.get(own, len(ages)) / RECENCY_HALF)
            + 0.5 * (confirmations(m) - 1)
        )
        out[m.id] = round(score, 4)
    return out


def _number(value: object) -> int:
    try:
        return max(int(value or 0), 0)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


# what a line names that a reader can check: a URL, a host, an address, a backticked span
_NAMED = re.compile(
    r"https?://[^\s`'\")>\]]+|`[^`\n]{2,120}`|\b[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
)
MIN_NAMED = 2  # one shared name is a topic; two are the same statement


def checkable_names(text: str) -> set[str]:
    """The checkable names of a text, compared without case, backticks or a closing stop."""
    return {n.strip("`").rstrip("/.").lower() for n in _NAMED.findall(text)} - {""}


def restated_by_rule(convention: Memory, facts: Iterable[Memory]) -> bool:
    """Whether a fact states this convention as a rule, naming all it names (two or more): the person's
    "the links should go to x.org, not api.x.org" is the report's "ALWAYS use `https://x.org` — NEVER
    use `api.x.org`" once the agent put it in place; the block says it once, in its fuller form."""
    names = checkable_names(convention.content)
    if len(names) < MIN_NAMED:
        return False
    rules = (f.content.lower() for f in facts if f.id != convention.id and _RULE.search(f.content))
    return any(all(n in rule for n in names) for rule in rules)


# --- work left on a side branch -------------------------------------------------------------------
# the git activity episode's own words for where commits went (memories written before its details
# named the branches)
_COMMITS_ON = re.compile(r"commits on `([^`\n]+)`")
_REVIEW = re.compile(r"\breview https?://")  # ... and the pull request it opened


def branches_committed(episode: Memory) -> list[str]:
    """The branches a session's git activity committed to, in order."""
    found = episode.details.get("branches")
    if isinstance(found, list | tuple):
        return [str(b) for b in found]
    return list(dict.fromkeys(_COMMITS_ON.findall(episode.content)))


def work_report(m: Memory) -> bool:
    """The agent's account of work it did, or a change: what a branch holds, not the environment."""
    return Tag.REPORTED in m.tags or bool(m.details.get("changed"))


def side_sessions(git_episodes: Iterable[Memory], ages: dict[str, int]) -> dict[str, str]:
    """The sessions whose work lives on a side branch, with the branch: each commit went to a branch
    other than the project's main line (the branch most sessions committed to, two at least), a later
    session committed on the main line, no later session's git activity names that branch (a merge
    or more work on it), and the session opened no pull request for it (one merged on the forge's site
    leaves no trace in later sessions). What such a session changed is not what the project runs now;
    the "Recent work" line of its git activity says where it is."""
    by_session: dict[str, list[str]] = {}
    said: dict[str, str] = {}
    reviewed: set[str] = set()
    for e in git_episodes:
        sid = e.provenance.session_id
        if sid:
            by_session.setdefault(sid, []).extend(branches_committed(e))
            said[sid] = said.get(sid, "") + " " + e.content
            if _REVIEW.search(e.content):
                reviewed.add(sid)
    counts: dict[str, int] = {}
    for branches in by_session.values():
        for b in set(branches):
            counts[b] = counts.get(b, 0) + 1
    if not counts:
        return {}
    main, most = max(counts.items(), key=lambda kv: kv[1])
    if most < 2 or list(counts.values()).count(most) > 1:
        return {}  # no one main line (each session on its own branch): nothing is a side branch
    out = {}
    for sid, branches in by_session.items():
        if not branches or main in branches or sid in reviewed:
            continue
        later = [s for s in by_session if ages.get(s, 0) < ages.get(sid, 0)]
        moved_on = any(main in by_session[s] for s in later)
        named_later = any(f"`{b}`" in said[s] or f" {b}" in said[s] for s in later for b in branches)
        if moved_on and not named_later:
            out[sid] = branches[-1]
    return out

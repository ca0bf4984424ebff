"""Shell tool calls in a transcript: which calls ran a command, what the command was, whether it worked,
which later run made a failure good; and what edits wrote.

Agents name their shell tool differently (`reading.tools` lists each agent's names) and pass the
command as a string, a JSON string or an argv list. What kind of command it is (a probe, a test or
build step, a check) is `reading.commands`'s.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.commands import REDIRECTS, argv, categorise, command_key, core_steps, step_keys
from cairn.pipeline.reading.tools import calls_tool
from cairn.services.project_block import command_steps, same_step
from cairn.transcripts.model import Role
from cairn.transcripts.tools import EDIT_TOOLS, SHELL_TOOLS


@dataclass(frozen=True, slots=True)
class ShellCall:
    call: EventDoc
    result: EventDoc | None
    command: str

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.is_error

    @property
    def category(self) -> str | None:
        return categorise(self.command)

    @property
    def key(self) -> str:
        return command_key(self.command)


def is_shell(event: EventDoc) -> bool:
    return calls_tool(event, SHELL_TOOLS)


def is_edit(event: EventDoc) -> bool:
    return calls_tool(event, EDIT_TOOLS)


def command_of(event: EventDoc) -> str | None:
    """The command line a shell tool call ran, or None when there is none to read."""
    raw = event.tool_input
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw.strip() or None
    if not isinstance(raw, dict):
        return None
    value = raw.get("command", raw.get("cmd"))
    if isinstance(value, list):
        parts = [str(p) for p in value]
        if (
            len(parts) >= 3
            and parts[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and parts[1] in ("-lc", "-c")
        ):
            return parts[2].strip() or None
        return shlex.join(parts) or None
    return value.strip() if isinstance(value, str) and value.strip() else None


_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+)$", re.M)
_PATCH_FILES = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


def patch_text(raw: dict) -> object:
    """A patch edit's text: Codex's `apply_patch` takes it as `input` (or `patch`), OpenCode's as
    `patchText`."""
    return raw.get("input") or raw.get("patch") or raw.get("patchText")


def edited_path(event: EventDoc) -> str | None:
    raw = event.tool_input
    if isinstance(raw, dict):
        # Claude Code, Gemini CLI, Copilot CLI; OpenCode's is `filePath`
        path = raw.get("file_path") or raw.get("path") or raw.get("notebook_path") or raw.get("filePath")
        if path:
            return str(path)
        raw = patch_text(raw)
    if isinstance(raw, str) and (m := _PATCH_FILE.search(raw)):  # Codex apply_patch
        return m.group(1).strip()
    return None


def edited_paths(event: EventDoc) -> list[str]:
    """Every file an edit wrote: its one path, or each file a patch touched."""
    raw = event.tool_input
    patch = patch_text(raw) if isinstance(raw, dict) else raw
    if isinstance(patch, str) and (found := _PATCH_FILES.findall(patch)):
        return [f.strip() for f in found]
    path = edited_path(event)
    return [path] if path else []


# a file a command line writes: a redirection's target (`> f`, `>> f`, `cat > f << 'EOF'`), or `tee`'s
_WRITES_TO = re.compile(
    r"(?<![<>&\d])>{1,2}\s*[\"']?([^\s\"'<>|;&()]+)|\btee\s+(?:-a\s+)?[\"']?([^\s\"'<>|;&()-][^\s\"'<>|;&()]*)"
)


def written_files(event: EventDoc) -> list[str]:
    """Every file a tool call writes: an edit's, or the files a shell command line redirects into."""
    if is_edit(event):
        return edited_paths(event)
    if not is_shell(event):
        return []
    command = (command_of(event) or "").split("\n", 1)[0]  # a heredoc's body is no command
    found = (a or b for a, b in _WRITES_TO.findall(command))
    return [f for f in found if f and f != "/dev/null"]


def patch_added(patch: str) -> list[str]:
    """The lines a patch adds (`+` lines, not the `+++` header)."""
    return [ln[1:] for ln in patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]


def added_text(event: EventDoc) -> str:
    """What an edit put in that was not there before, folded to one line: a patch's added lines, the
    lines of a replacement its old text did not have, a new file's text."""
    raw = event.tool_input
    if isinstance(raw, dict):
        pairs = [raw] + [e for e in raw.get("edits") or [] if isinstance(e, dict)]  # MultiEdit
        added: list[str] = []
        for pair in pairs:
            new = new_text(pair)
            if isinstance(new, str):
                old = str(old_text(pair) or "")
                before = {ln.strip() for ln in old.splitlines()}
                added += [ln for ln in new.splitlines() if ln.strip() not in before]
        written = raw.get("content") or raw.get("file_text")
        if not added and isinstance(written, str):
            added = written.splitlines()
        if added:
            return " ".join(" ".join(added).split())
        raw = patch_text(raw)
    return " ".join(" ".join(patch_added(raw)).split()) if isinstance(raw, str) else ""


def succeeded_edits(events: Sequence[EventDoc]) -> list[EventDoc]:
    """The edit calls, every thread's, whose result came back without an error, in order."""
    done = {
        e.tool_call_id for e in events if e.role is Role.TOOL_RESULT and not e.is_error and e.tool_call_id
    }
    return [e for e in events if e.role is Role.TOOL_CALL and is_edit(e) and e.tool_call_id in done]


def old_text(pair: dict) -> object:
    """A replacement's old text in any agent's field name (OpenCode's is camelCase)."""
    return pair.get("old_string") or pair.get("old_str") or pair.get("oldString")


def new_text(pair: dict) -> object:
    """A replacement's new text in any agent's field name."""
    return pair.get("new_string") or pair.get("new_str") or pair.get("newString")


def replaced(event: EventDoc) -> tuple[str, str]:
    """What an edit took out and what stood there after it: a replacement's old and new text (each
    pair of a MultiEdit), a patch's `-` lines and its `+` and context lines; a whole file written
    anew has no old text to read."""
    raw = event.tool_input
    old: list[str] = []
    new: list[str] = []
    if isinstance(raw, dict):
        for pair in [raw] + [e for e in raw.get("edits") or [] if isinstance(e, dict)]:
            before, after = old_text(pair), new_text(pair)
            if isinstance(before, str):
                old.append(before)
            if isinstance(after, str):
                new.append(after)
        written = raw.get("content") or raw.get("file_text")
        if isinstance(written, str):
            new.append(written)
        raw = patch_text(raw)
    if isinstance(raw, str):
        for line in raw.splitlines():
            if line.startswith("-") and not line.startswith("---"):
                old.append(line[1:])
            elif line.startswith(("+", " ")) and not line.startswith("+++"):
                new.append(line[1:])
    return "\n".join(old), "\n".join(new)


def checkouts(events: list[EventDoc], cwd: str | None) -> tuple[str, ...]:
    """The folders a session worked in, deepest first: its own checkout and, beside it, those its
    commands ran in (a `workdir`, `cd /abs && …`: a git worktree next to the main checkout). A path
    under one of them means the same file in a reader's checkout once made relative to it."""
    if not cwd or not cwd.startswith("/"):
        return ()
    home = posixpath.normpath(cwd)
    beside = posixpath.dirname(home)
    found = {home}
    for e in events:
        if e.role is not Role.TOOL_CALL:
            continue
        where = e.tool_input.get("workdir") if isinstance(e.tool_input, dict) else None
        if not isinstance(where, str) and (command := command_of(e)) and (m := _ABS_CD.match(command)):
            where = m.group(1)
        if isinstance(where, str) and where.startswith(beside + "/"):
            found.add(posixpath.normpath(where))  # /tmp and other folders away from it: not checkouts
    return tuple(sorted(found, key=len, reverse=True))


def in_checkout(path: str, roots: tuple[str, ...]) -> str:
    """`path` relative to the deepest checkout it lies in (`/home/me/app/src/a.ts` is `src/a.ts`)."""
    for root in roots:
        if path.startswith(root + "/"):
            return path[len(root) + 1 :]
    return path


_ABS_CD = re.compile(r"""^\s*cd\s+["']?([/~][^&;|]*?)["']?\s*&&\s*""")  # the folder: group 1
_PAGED = re.compile(r"\s*\|\s*(?:tail|head)(?:\s+-n\s*\d+|\s+-\d+)?(?=\s*(?:$|&&|;|\|\|))")  # `| tail -3`


def shown_command(command: str) -> str:
    """A command as a reader would run it again: without a leading `cd` into the session's own
    checkout (an absolute folder, not the reader's) and without how its output was shown (`2>&1`,
    `| tail -3`). `cd web && bun test` keeps its `cd`: where it ran is part of what ran."""
    return command_key(_PAGED.sub("", REDIRECTS.sub("", _ABS_CD.sub("", command)))) or command_key(command)


BRIEF_CHARS = 80
_DEEP_PATH = re.compile(r"(?<![\w/.~-])(?:[\w.@~-]+/){2,}([\w.@-]+)(?![\w/])")


def brief_command(command: str, limit: int = BRIEF_CHARS) -> str:
    """`shown_command`, short enough to name a command in a sentence: a long line's deep paths keep
    their file names (`bun test …/a.test.ts …/b.test.ts`) and what still runs long is cut at a word.
    The command as it ran stays in the memory's details; this is how a line of text refers to it."""
    shown = shown_command(command)
    if len(shown) <= limit:
        return shown
    shown = _DEEP_PATH.sub(lambda m: "…/" + m.group(1), shown)
    if len(shown) <= limit:
        return shown
    return shown[:limit].rsplit(" ", 1)[0].rstrip() + " …"


@dataclass(frozen=True, slots=True)
class Resolution:
    failure: ShellCall
    at: int  # where the failed command starts in the working line (0 when it is the line)
    variant: str | None = None  # the different command that did what the failed one tried


class Resolutions:
    """Which failed commands later runs made good: a failure is resolved by a success that runs it
    again (alone, or inside a longer chain), by successes that, between them, ran each of its steps
    (`lint && test` failed; later `lint` and `test` each passed), or by a working variant soon after
    it (the same program and subcommand on the same names, with other options: `workmux add --pr 1510
    --name x` failed, `workmux add review/x --pr 1510 --name x` worked)."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[ShellCall, set[str], int]] = {}
        self._successes = 0

    def failed(self, call: ShellCall) -> None:
        self._pending[call.key] = (call, set(core_steps(call.command)) or {call.key}, self._successes)

    def succeeded(self, call: ShellCall) -> list[Resolution]:
        """The failures this success resolves."""
        self._successes += 1
        ran = set(core_steps(call.command))
        done = []
        for key, (failure, remaining, since) in list(self._pending.items()):
            at = rerun_at(call.command, key)
            remaining -= ran
            if at is not None or not remaining:
                del self._pending[key]
                done.append(Resolution(failure, at or 0))
            elif self._successes - since <= VARIANT_WINDOW and is_variant(call.command, failure.command):
                del self._pending[key]
                done.append(Resolution(failure, 0, call.key))
        return done


VARIANT_WINDOW = 6  # successful commands after a failure within which a working variant answers it


def is_variant(command: str, failed: str) -> bool:
    """`command` does what `failed` tried, another way: the same program and subcommand, and every
    name the failed line gave (its words that are not options) still there; only options changed or
    were added. Or the very same words run through another wrapper, or none (`rtk bun run test` ->
    `bun run test`, `pytest -q` -> `uv run pytest -q`), or the same action on the same targets by
    another tool. `go test ./pkg/...` after `go test ./...` failed is a narrower run, not a variant."""
    if command_key(command) == command_key(failed):
        return False
    tried, done = argv(failed), argv(command)
    short, long = sorted((tried, done), key=len)
    if len(short) >= 2 and len(long) > len(short) and long[-len(short) :] == short:
        return True
    if _same_action_elsewhere(tried, done):
        return True
    if len(tried) < 2 or tried[:2] != done[:2]:
        return False
    names = Counter(w for w in tried if not w.startswith("-"))
    return names <= Counter(w for w in done if not w.startswith("-"))


def _same_action_elsewhere(tried: list[str], done: list[str]) -> bool:
    """The failed line's action on the same targets, by another tool: `workmux remove wt-1 -f` failed,
    `git worktree remove ../trees/wt-1` worked. The action is the failed line's subcommand; a target
    is each name it gave, found in the other line as a word or a path's last part. No target, no
    claim: `make test` then `go test ./...` are not one action."""
    if len(tried) < 3 or tried[1].startswith("-") or tried[0] == done[0]:
        return False
    names = [w for w in tried[2:] if not w.startswith("-")]
    given = {w for w in done[1:]} | {w.rstrip("/").rsplit("/", 1)[-1] for w in done[1:]}
    return bool(names) and tried[1] in done[1:] and all(n in given for n in names)


def ran_elsewhere(command: str, failed: str) -> bool:
    """`command` ran the failed line's one step again through another path to its program, or from the
    folder its path pointed into: `go build ./go/cmd/x/` failed at the root ("go: command not found",
    "main module does not contain package"), `cd go && /usr/local/go/bin/go build ./cmd/x/` worked.
    Without a move (`cd`), another path is another target: `go test ./a/x` is not `go test ./x`. The
    session got past such a failure; it is no fix of the code to learn (the checks say how it runs)."""
    tried, (done, moved) = _one_step(failed)[0], _one_step(command)
    if tried is None or done is None:
        return False
    return tried == done or (moved and same_step(tried, done))


@lru_cache(maxsize=4096)
def _one_step(command: str) -> tuple[str | None, bool]:
    """A line's one working step as the project runs it (None for several), and whether it moved
    first: asked of each good line once per failure of a session, so each line is read once."""
    steps = command_steps(command)
    return (steps[0] if len(steps) == 1 else None), bool(_MOVES.search(command))


_MOVES = re.compile(r"(?:^|&&|;)\s*(?:cd|pushd)\s")


def rerun_at(command: str, key: str) -> int | None:
    """Where `command` runs the command `key` again: 0 when it is the same line, the index of its first
    step when the line chains it after other steps (`git remote set-url … && git fetch origin`), None
    when it does not run it."""
    if command_key(command) == key:
        return 0
    steps, wanted = step_keys(command), step_keys(key)
    for i in range(len(steps) - len(wanted) + 1):
        if steps[i : i + len(wanted)] == wanted:
            return i
    return None


def shell_calls(events: list[EventDoc]) -> list[ShellCall]:
    """Shell calls in order, each paired with its result (matched by tool_call_id)."""
    results = {e.tool_call_id: e for e in events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    calls = []
    for e in events:
        if is_shell(e):
            command = command_of(e)
            if command:
                calls.append(ShellCall(e, results.get(e.tool_call_id or ""), command))
    return calls


def is_agent_mechanics_error(text: str) -> bool:
    """Errors about the agent's own tool protocol (e.g. "File has not been read yet"), not the project,
    and a call the person declined to let run: it never ran, so it failed at nothing."""
    return "<tool_use_error>" in text or text.strip() in ("", "Error") or bool(_DECLINED.search(text[:400]))


# how agents say the person declined a tool call: "The user doesn't want to proceed with this tool use.
# The tool use was rejected", "rejected by user", "The user rejected permission to use this tool call";
# Gemini CLI's call the person cancelled (`status: "cancelled"`): "[Operation Cancelled] Reason: …"
_DECLINED = re.compile(
    r"\b(?:tool use|tool call|command|request|permission)\b[^.\n]{0,40}\b(?:was |were )?"
    r"(?:rejected|denied|declined) by (?:the )?user\b"
    r"|\buser (?:rejected|denied|declined)\b[^.\n]{0,40}\b(?:tool|command|permission)"
    r"|\btool use was rejected\b"
    r"|^\s*\[operation cancell?ed\]",
    re.I,
)


NAMED_ERROR = re.compile(r"(\b[A-Za-z_.]*(?:Error|Exception)|\berror(?:\[\w+\]| TS\d+)?)\s*:", re.I)
SAYS_ERROR = re.compile(r"\b(error|failed|failure|exception|cannot|not found|traceback)\b", re.I)


def first_error_line(text: str, limit: int = 240) -> str:
    """The most telling line of an error output: a named error (`TypeError: ...`, `error TS2307: ...`),
    else one that says error/failed, else the last non-noise line. A test runner's summary ("1 error in
    0.3s") says less than the exception above it."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    noise = re.compile(r"^(npm warn|npm WARN|warning:|\s*at\s|>\s)", re.I)
    useful = [ln for ln in lines if not noise.match(ln)]
    for pattern in (NAMED_ERROR, SAYS_ERROR):
        for ln in useful:
            if pattern.search(ln):
                return ln[:limit]
    return (useful[-1] if useful else (lines[-1] if lines else ""))[:limit]

"""The rule-based extractor: deterministic, zero-LLM, and the default locally and in tests.

It learns only from two trustworthy sources: what a person typed on the main thread (preferences,
decisions, facts they state) and what tools confirmed (commands that succeeded, errors followed by a
successful retry, URLs a server printed, package versions an installer printed). It never learns
from the assistant's prose, sub-agent prompts (written by the assistant), system prompts or Cairn's
own injected context (the parser strips those), nor from errors about the agent's tool protocol.
"""

from __future__ import annotations

import re

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import TITLE_CHARS, Tag
from cairn.pipeline.learning.extractor import ExtractContext, Extraction
from cairn.pipeline.learning.person import from_user
from cairn.pipeline.models import Candidate, CandidateLink, ChunkDoc, EventDoc
from cairn.pipeline.reading.commands import VERIFYING, is_learnable_command, is_probe, step_keys
from cairn.pipeline.reading.failures import real_failure
from cairn.pipeline.reading.shell import (
    Resolution,
    Resolutions,
    ShellCall,
    added_text,
    brief_command,
    edited_path,
    first_error_line,
    in_checkout,
    is_edit,
    is_shell,
    shell_calls,
    shown_command,
)
from cairn.pipeline.reading.steps import one_line
from cairn.services.directives import COMMENT_LINE
from cairn.transcripts.model import Role

_I = re.I
SERVED_URL = re.compile(
    r"(?:Local:|listening on|running (?:on|at)|Uvicorn running on|Serving (?:HTTP )?on|Server running at"
    r"|started server on|ready on)\s*(https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\])(?::\d+)?[^\s]*)",
    _I,
)
PNPM_ADDED = re.compile(r"^\+\s+(@?[\w./-]+)\s+(\d+\.\d+\.\d+[\w.-]*)", re.M)
PIP_INSTALLED = re.compile(r"Successfully installed (.+)$", re.M)
# a package manager or toolchain installer names what it installed and its version on one line:
# `installed @chakra-ui/react@3.33.0` (bun), `mise go@1.25.6 [1/3] install`, `go: added x v0.1.0`,
# `Adding serde v1.0.1` (cargo), `Installing rake (13.0.6)` (bundler, poetry)
_INSTALL_WORD = re.compile(r"\b(?:install(?:ed|ing)?|add(?:ed|ing)?|upgrad(?:ed|ing)|locked)\b", re.I)
_NAME_VERSION = (
    re.compile(r"(?<![\w/.@-])((?:@[\w.-]+/)?[A-Za-z][\w.-]*)@v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"(?<![\w/.@-])([A-Za-z][\w./-]*) v(\d+\.\d+[\w.+-]*)"),
    re.compile(r"(?<![\w/.@-])([A-Za-z][\w.-]*) \((\d+\.\d+[\w.+-]*)\)"),
)


def _acted_on(events: list[EventDoc]) -> set[int]:
    """The person's messages (by index) the agent acted on, calling a tool before the person spoke again,
    or left unanswered: the others it answered in words only, as one does what one is told, not asked."""
    out: set[int] = set()
    at: int | None = None
    answered = False
    for k, e in enumerate(events):
        if e.is_sidechain:
            continue
        if e.role is Role.USER:
            if at is not None and not answered:
                out.add(at)
            at, answered = k, False
        elif at is not None and e.role is Role.TOOL_CALL:
            out.add(at)
        elif e.role is Role.ASSISTANT:
            answered = True
    if at is not None and not answered:
        out.add(at)
    return out


class RuleExtractor:
    name = "rules"

    def extract(self, chunk: ChunkDoc, ctx: ExtractContext) -> Extraction:
        out: list[Candidate] = []
        acted = _acted_on(chunk.events)
        for k, event in enumerate(chunk.events):
            if event.role is Role.USER and not event.is_sidechain:
                out.extend(from_user(event, told=k not in acted))
        calls = shell_calls(chunk.events)
        out.extend(_commands_that_worked(calls))
        # errors and their fixes are paired over the whole session by the reflect stage: a chunk sees
        # one occurrence of a recurring error, and each chunk's pair would be a fix memory of its own
        out.extend(_tool_facts(chunk.events, calls))
        return Extraction(candidates=_unique(out), extractor=self.name)


# --- what tools confirmed ---------------------------------------------------------------------
def _span(call: ShellCall) -> dict:
    end = call.result.last_line if call.result else call.call.last_line
    return {"line_start": call.call.line_no, "line_end": end}


_VERB = {
    "test": "Run the tests",
    "typecheck": "Type-check / lint",
    "build": "Build",
    "run": "Start the app",
    "deploy": "Deploy / migrate",
}


def _commands_that_worked(calls: list[ShellCall]) -> list[Candidate]:
    by_key: dict[str, list[ShellCall]] = {}
    for c in calls:
        if c.category in VERIFYING and is_learnable_command(c.command) and c.result is not None:
            by_key.setdefault(c.key, []).append(c)
    out = []
    for key, runs in by_key.items():
        ok = [c for c in runs if c.ok]
        if not ok:
            continue
        category = runs[0].category or "run"
        out.append(
            Candidate(
                kind=MemoryKind.PROCEDURE,
                title=f"{_VERB[category]}: {key}"[:TITLE_CHARS],
                content=f"{_VERB[category]} with `{key}`",
                tags=[category, "command"],
                confidence=0.6,
                details={
                    "command": key,
                    "category": category,
                    "steps": [key],
                    "success_count": len(ok),
                    "failure_count": len(runs) - len(ok),
                },
                ref=f"cmd:{key}",
                **_span(ok[-1]),
            )
        )
    return out


def errors_and_fixes(
    events: list[EventDoc], calls: list[ShellCall], checkouts: tuple[str, ...] = ()
) -> list[Candidate]:
    """A failed command that later succeeded: an episode (what failed) and the fix (what was done between).

    A success is paired with the latest failure of its command before it, so the fix is what was done
    since that failure; an error that came back and was fixed again is one pair, its latest."""
    out: list[Candidate] = []
    position = {e.seq: i for i, e in enumerate(events)}
    resolutions = Resolutions()
    pairs: dict[str, tuple[ShellCall, ShellCall, Resolution]] = {}  # by command: latest failure, fix
    for call in calls:
        if call.failed:
            # `ls missing/` then creating it is exploring, not an error and its fix
            if is_learnable_command(call.command) and real_failure(call):
                resolutions.failed(call)
        elif call.ok:
            for r in resolutions.succeeded(call):
                pairs[r.failure.key] = (r.failure, call, r)
    for failed, later, how in sorted(pairs.values(), key=lambda p: p[0].call.seq):
        error = first_error_line(failed.result.text if failed.result else "")
        between = events[position[failed.call.seq] + 1 : position[later.call.seq]]
        steps = _fix_steps(between, failed.key, checkouts)
        # `mise trust && mise run fmt`: what the working line ran before the failed command is the fix
        steps += [
            f"run `{k}`"
            for k in step_keys(later.command)[: how.at]
            if f"run `{k}`" not in steps and not is_probe(k)  # `git remote -v` in it is a look
        ]
        if how.variant:  # a different command did what the failed one tried: that is the fix
            steps = [s for s in steps if s != f"run `{how.variant}`"] + [f"run `{how.variant}` instead"]
        ref = f"err:{failed.key}"
        # as a reader would type them again: `cd /their/checkout && x 2>&1 | tail -3` is `x`
        shown, steps = shown_command(failed.key), [_shown_step(s) for s in steps]
        brief = brief_command(failed.key)  # the fix names it; its steps and details keep it whole
        out.append(
            Candidate(
                kind=MemoryKind.EPISODE,
                title=f"`{shown}` failed: {error}"[:TITLE_CHARS],
                content=f"`{shown}` failed with: {error}",
                tags=[Tag.ERROR, failed.category or Tag.COMMAND],
                confidence=0.6,
                details={"outcome": "fixed", "error": error, "command": failed.key},
                ref=ref,
                line_start=failed.call.line_no,
                line_end=(later.result or later.call).last_line,
            )
        )
        if steps:
            out.append(
                Candidate(
                    kind=MemoryKind.PROCEDURE,
                    title=f"Fix for `{brief}`: {error}"[:TITLE_CHARS],
                    content=f'When `{brief}` fails with "{error}": '
                    + "; ".join(steps)
                    + ("" if how.variant else "; then it succeeds"),
                    tags=["fix", failed.category or "command"],
                    confidence=0.65,
                    details={
                        "steps": [*steps] if how.variant else [*steps, brief],
                        "fixes_error": error,
                        "command": failed.key,
                        "success_count": 1,
                        "failure_count": 0,
                    },
                    links=[CandidateLink(predicate="fixes", target_ref=ref)],
                    line_start=failed.call.line_no,
                    line_end=(later.result or later.call).last_line,
                )
            )
    return out


MAX_FIX_STEPS = 4
FIX_EDIT_CHARS = 90
_RUN_STEP = re.compile(r"^run `(.+)`( instead)?$", re.S)


def _shown_step(step: str) -> str:
    m = _RUN_STEP.match(step)
    return f"run `{shown_command(m.group(1))}`{m.group(2) or ''}" if m else step


def _fix_steps(between: list[EventDoc], failing_key: str, checkouts: tuple[str, ...] = ()) -> list[str]:
    results = {e.tool_call_id: e for e in between if e.role is Role.TOOL_RESULT and e.tool_call_id}
    steps: list[str] = []
    edits: dict[str, str] = {}
    for e in between:
        result = results.get(e.tool_call_id or "")
        if result is None or result.is_error:
            continue
        if is_edit(e) and (path := edited_path(e)):
            step = f"edit {in_checkout(path, checkouts)}"  # the file in a reader's checkout
            if added := added_text(e):  # what the edit put in is the fix a reader looks for
                edits[step] = one_line(added.replace("`", "'"), FIX_EDIT_CHARS)
        elif is_shell(e):
            calls = shell_calls([e, result])
            if not calls or calls[0].key == failing_key or is_probe(calls[0].command):
                continue  # exploration (ls, cat, grep) is not part of a fix
            if not is_learnable_command(calls[0].command):
                continue
            step = f"run `{calls[0].key}`"
        else:
            continue
        if step not in steps:
            steps.append(step)
    # what was done just before it worked is the fix; earlier, trying. An edited file is named once,
    # with what its last edit put in
    return [f"{s} (`{edits[s]}`)" if s in edits else s for s in steps[-MAX_FIX_STEPS:]]


BACKGROUND_ID = re.compile(r"running in background with ID:\s*(\S+)", _I)


def _background_output(events: list[EventDoc]) -> dict[str, str]:
    """Output of background commands, read later through a BashOutput-style tool, by background id."""
    results = {e.tool_call_id: e for e in events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    out: dict[str, str] = {}
    for e in events:
        if (
            e.role is Role.TOOL_CALL
            and isinstance(e.tool_input, dict)
            and (bid := e.tool_input.get("bash_id"))
        ):
            result = results.get(e.tool_call_id or "")
            if result is not None and not result.is_error:
                out[str(bid)] = out.get(str(bid), "") + "\n" + result.text
    return out


def _tool_facts(events: list[EventDoc], calls: list[ShellCall]) -> list[Candidate]:
    out = []
    background = _background_output(events)
    for c in calls:
        if not c.ok or c.result is None:
            continue
        output = c.result.text
        if (bg := BACKGROUND_ID.search(output)) and bg.group(1) in background:
            output += background[bg.group(1)]
        if c.category == "run" and (m := SERVED_URL.search(output)):
            url = m.group(1).rstrip("/.,")
            out.append(
                Candidate(
                    kind=MemoryKind.FACT,
                    content=f"`{c.key}` serves the app at {url}",
                    title=f"App URL: {url}",
                    tags=["url"],
                    confidence=0.7,
                    details={"source": "tool", "url": url, "command": c.key},
                    **_span(c),
                )
            )
        if versions := _versions(output):
            listed = ", ".join(f"{n}@{v}" for n, v in versions)  # the form installers take
            out.append(
                Candidate(
                    kind=MemoryKind.FACT,
                    content=f"Installed versions: {listed}",
                    title="Installed package versions",
                    tags=[Tag.VERSIONS],
                    confidence=0.7,
                    details={"source": "tool", "command": c.key, "versions": dict(versions)},
                    **_span(c),
                )
            )
    return out


def _versions(text: str, limit: int = 6) -> list[tuple[str, str]]:
    """Packages and tools an installer said it installed, with their versions."""
    found = [(m.group(1), m.group(2)) for m in PNPM_ADDED.finditer(text)]
    for line in text.splitlines():
        # an installer prints no comments: a file's `# … when tagging v2.4.0; we'll add it back` printed by
        # `cat` or `sed` installs nothing, whatever its words
        if len(line) <= 300 and _INSTALL_WORD.search(line) and not COMMENT_LINE.match(line):
            for pattern in _NAME_VERSION:
                found += [
                    (m.group(1), m.group(2).rstrip(".-"))
                    for m in pattern.finditer(line)
                    if not _INSTALL_WORD.fullmatch(m.group(1))  # `bun install v1.3.13` is bun's banner
                ]
    for m in PIP_INSTALLED.finditer(text):
        for item in m.group(1).split():
            name, _, version = item.rpartition("-")
            if name and version[:1].isdigit():
                found.append((name, version))
    return list(dict.fromkeys(found))[:limit]


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in candidates:
        key = (c.kind.value, " ".join(c.content.lower().split()))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out

"""Session-level signals every stack has, read over the whole session: zero-LLM memories.

The chunk extractors see a slice of the session; some things only make sense whole:

- **checks**: the commands the session ran to verify its work (test, lint, format, type-check, build),
  recognised by what the command and the agent's own description say it does, never by a list of tools;
  the ones that succeeded become one procedure, in the order the session ran them;
- **git activity**: branches created, commits (hash and message), pushes (range and branch) and pull or
  merge requests (their URL), read from git's own output, which is the same in every language;
- **plans**: a plan the user handed over or approved (markdown with sections) kept section by section,
  so "what was out of scope" or "how was it to be verified" is a memory, not a line in a long excerpt;
- **compaction summaries**: the model-written summary of the session, split into its sections;
- **the todo list's final state**: what was never completed is an open item (an episode tagged `open`);
- **how the last request ended**: the agent's closing account of its work (a root cause, what it
  committed), when nothing was run after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import TITLE_CHARS, Tag
from cairn.pipeline.models import Candidate, EventDoc
from cairn.pipeline.reading.commands import argv, core_steps, is_learnable_command, purpose_of
from cairn.pipeline.reading.git_state import COMMIT_LINE
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.steps import strip_headers
from cairn.search.analyzer import analyze
from cairn.transcripts.model import Role
from cairn.transcripts.tools import PLAN_TOOLS

# an item of 3+ terms, 80 % of them in one request, says that request again (a quote, a close paraphrase)
RETOLD_MIN_TERMS, RETOLD_SHARE = 3, 0.8
SECTION_CHARS = 1_400
MAX_CHECKS, CHECK_CHARS = 10, 160
MIN_SECTION_CHARS = 40
MAX_SECTIONS = 12

_PUSH = re.compile(r"^\s*(?:([0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})|\* \[new branch\])\s+(\S+) -> (\S+)", re.M)
_REVIEW_URL = re.compile(r"https?://[^\s\"')]+/(?:pull|pulls|merge_requests)/\d+")
_NEW_BRANCH = re.compile(r"\bgit (?:checkout -b|switch -c|branch)\s+(\w[\w./-]*)")

_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*$")
_NUMBERED = re.compile(r"^(\d{1,2})\.\s+([A-Z][^:\n]{2,60}):\s*$")
_OPEN_WORDS = re.compile(r"pending|next step|current work|todo|remaining|open", re.I)
_CHECK_WORDS = re.compile(r"verif|test", re.I)
_ERROR_WORDS = re.compile(r"error|fix|problem", re.I)
# a section of open work whose first item says there is none ("None", "- Nothing pending", "N/A", "No
# remaining tasks", "All tasks have been completed"): what it lists after that is done work, a recap
_NONE_LEFT = re.compile(
    r"^\W*(?:none\b|nothing\b|n/?a\b|no (?:\w+ ){0,2}(?:tasks?|work|items?|steps?|requests?)\b"
    r"|all (?:\w+ ){0,3}(?:done|complete[d]?|finished)\b)",
    re.I,
)


# --- checks ----------------------------------------------------------------------------------------
def checks(reading: SessionReading) -> list[Candidate]:
    seen: dict[str, tuple[str, EventDoc]] = {}
    runs: dict[str, list[str]] = {}
    for call in reading.shell_calls:
        if not call.ok or call.call.is_sidechain or not is_learnable_command(call.command):
            continue
        description = ""
        if isinstance(call.call.tool_input, dict):
            description = str(call.call.tool_input.get("description") or "")
        steps = core_steps(call.command)
        alone = len(steps) == 1  # the description, and what a runner echoed, are then this step's
        for key in steps:
            purpose = purpose_of(key, description if alone else "")
            if purpose and key not in seen and len(key) <= CHECK_CHARS and len(seen) < MAX_CHECKS:
                seen[key] = (purpose, call.call)
                if alone and call.result is not None:
                    runs[key] = runner_echo(call.result.text)
    if not seen:
        return []
    # one check a line: a long list is cut to the lines a question is about, never mid-check
    listed = "".join(f"\n- {purpose}: `{key}`{_runs(runs.get(key))}" for key, (purpose, _) in seen.items())
    first = min(e.line_no for _, e in seen.values())
    last = max(e.last_line for _, e in seen.values())
    return [
        Candidate(
            kind=MemoryKind.PROCEDURE,
            title="Project checks: " + ", ".join(dict.fromkeys(p for p, _ in seen.values())),
            content=f"Checks run and passing in this project, in the order the session ran them:{listed}",
            tags=[Tag.CHECKS, Tag.COMMAND],
            confidence=0.65,
            details={"source": "tool", "steps": list(seen), "success_count": 1, "failure_count": 0},
            line_start=first,
            line_end=last,
        )
    ]


# a script runner says what it runs before running it: bun/yarn `$ cmd`, mise `[task] $ cmd`, npm and
# pnpm `> pkg@1.0.0 test` then `> cmd`; that line is what `npm test` or `mise run lint` means here
_ECHO = re.compile(r"^(?:\[([\w:./-]+)\] )?\$ (\S.*)$")
_NPM_HEADER = re.compile(r"^> \S+@\S* [\w:.-]+")
MAX_ECHOES, ECHO_CHARS = 3, 120


def runner_echo(output: str) -> list[str]:
    """The commands a script runner printed it was running, as `task: command` when it names tasks."""
    found: list[str] = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        line = line.rstrip()
        if m := _ECHO.match(line):
            task, command = m.groups()
            found.append(f"{task}: {command}" if task else command)
        elif line.startswith("> ") and i and _NPM_HEADER.match(lines[i - 1]) and not _NPM_HEADER.match(line):
            found.append(line[2:].strip())
    found = [f for f in dict.fromkeys(found) if len(f) <= ECHO_CHARS]
    return found[:MAX_ECHOES]


def _runs(echoed: list[str] | None) -> str:
    return f" (runs {'; '.join(f'`{e}`' for e in echoed)})" if echoed else ""


# --- git activity ----------------------------------------------------------------------------------
_LOGGED = re.compile(r"^(?:commit )?([0-9a-f]{7,40})(?: \([^)]*\))?(?: (.+))?$")
MAX_LOGGED = 10


def git_history(reading: SessionReading) -> list[Candidate]:
    """The repository's latest commits as the session's last `git log` listed them: what came before
    the session's own work ("what was the last commit before the fix?"), which its git episode, made
    of what the session did, does not say. A later listing replaces it (`about`)."""
    listed: tuple[list[str], EventDoc, EventDoc] | None = None
    own: set[str] = set()  # the session's own commits: its git episode's
    for call in reading.shell_calls:
        if call.result is not None:
            own.update(m.group(2)[:7] for m in COMMIT_LINE.finditer(call.result.text or ""))
        steps = core_steps(call.command)
        if not call.ok or call.result is None or len(steps) != 1 or not _is_git_log(steps[0]):
            continue
        commits, pending = [], None
        for line in strip_headers(call.result.text or "").splitlines():
            line = line.strip()
            if m := _LOGGED.match(line):
                pending = m.group(1)[:8]
                if m.group(2) and not line.startswith("commit "):  # `--oneline`: hash and subject
                    commits.append(f"`{pending}` {m.group(2).strip()[:100]}")
                    pending = None
            elif pending and line and not line.startswith(("Author:", "Date:", "Merge:")):
                commits.append(f"`{pending}` {line[:100]}")  # the default format: the subject's line
                pending = None
        if commits:
            listed = (commits[:MAX_LOGGED], call.call, call.result)
    if listed is None:
        return []
    commits, call, result = listed
    if all(c[1:8] in own for c in commits):  # a listing of only the session's own work says nothing new
        return []
    return [
        Candidate(
            kind=MemoryKind.FACT,
            title="Latest commits of the repository (git log)",
            content="Latest commits of the repository, newest first, as `git log` listed them: "
            + "; ".join(commits),
            tags=[Tag.GIT, "history"],
            confidence=0.6,
            details={"source": "tool", "about": "latest commits"},
            line_start=call.line_no,
            line_end=result.last_line,
        )
    ]


def _is_git_log(step: str) -> bool:
    """`git log …`, or through a wrapper (`rtk git log --oneline -5`); not one that prints patches."""
    words = argv(step)
    at = next((i for i, w in enumerate(words[:3]) if w == "git"), None)
    return (
        at is not None and words[at + 1 : at + 2] == ["log"] and not {"-p", "--patch", "--stat"} & set(words)
    )


def _push(commits: str | None, src: str, dst: str) -> str:
    """One push as git reported it; a branch pushed to its own name is named once (`new branch
    fix/x`, `a1..b2 to fix/x`), not twice (`fix/x -> fix/x`)."""
    what = commits or "new branch"
    if src != dst:
        return f"{what} {src} -> {dst}"
    return f"{what} to {dst}" if commits else f"{what} {dst}"


@dataclass
class _GitSeen:
    """What git said during a session: branches made, commits, pushes, reviews opened, the lines that
    said so, and where its last `git status` was."""

    branches: list[str] = field(default_factory=list)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (branch, `hash` subject)
    pushes: list[str] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    status_at: tuple[int, int] | None = None


def _git_seen(reading: SessionReading) -> _GitSeen:
    seen = _GitSeen()
    for call in reading.shell_calls:
        if not call.ok or call.result is None:
            continue
        output = call.result.text or ""
        if "git status" in call.command:
            seen.status_at = (call.call.line_no, call.result.last_line)
        before = (len(seen.branches), len(seen.commits), len(seen.pushes), len(seen.reviews))
        seen.branches += [m.group(1) for m in _NEW_BRANCH.finditer(call.command)]
        seen.commits += [
            (m.group(1), f"`{m.group(2)}` {m.group(3).strip()[:120]}") for m in COMMIT_LINE.finditer(output)
        ]
        seen.pushes += [_push(*m.groups()) for m in _PUSH.finditer(output)]
        seen.reviews += [m.group(0).rstrip(".,") for m in _REVIEW_URL.finditer(output + " " + call.command)]
        if before != (len(seen.branches), len(seen.commits), len(seen.pushes), len(seen.reviews)):
            seen.lines.extend((call.call.line_no, call.result.last_line))
    for e in reading.events:  # the agent's own record of a pull request it opened (Claude Code's pr-link)
        if e.role is Role.SYSTEM and (m := _REVIEW_URL.search(e.text)):
            seen.reviews.append(m.group(0).rstrip(".,"))
            seen.lines.extend((e.line_no, e.last_line))
    return seen


def git_activity(reading: SessionReading) -> list[Candidate]:
    seen = _git_seen(reading)
    branches, commits, pushes, reviews, lines = (
        seen.branches,
        seen.commits,
        seen.pushes,
        seen.reviews,
        seen.lines,
    )
    parts = []
    if branches:
        parts.append("branch " + ", ".join(f"`{b}`" for b in dict.fromkeys(branches)))
    on: dict[str, list[str]] = {}  # each branch named once, its commits in order
    if commits:
        for branch, commit in dict.fromkeys(commits):
            on.setdefault(branch, []).append(commit)
        parts.append("; ".join(f"commits on `{b}`: " + "; ".join(cs) for b, cs in on.items()))
    if pushes:
        parts.append("pushed " + "; ".join(dict.fromkeys(pushes)))
    if reviews:
        parts.append("review " + ", ".join(dict.fromkeys(reviews)))
    if seen.status_at and (
        state := reading.git_state
    ):  # the handoff says it too, but leaves recall once delivered
        parts.append(f"at the end, git status: {state}")
        lines.extend(seen.status_at)
    if not parts:
        return []
    # the branches its commits went to, in order: the block tells a side branch's work from the
    # project's line of work by them
    details: dict[str, object] = {"source": "tool", "commits": len(commits), "branches": list(on)}
    if not (branches or commits or pushes or reviews):
        # the checkout's state at the end and nothing the session did to git: a later session's is newer
        details["status_only"] = True
    if (tree := reading.tree) is not None:
        # what its last status of the checkout listed as not committed: an earlier session's handed-over
        # files it does not list were committed in between (`remembering.open_items`)
        details["tree"] = {"dirty": list(tree.dirty), "ahead": tree.ahead, "complete": tree.complete}
    return [
        Candidate(
            kind=MemoryKind.EPISODE,
            title="Git activity: " + (reviews[-1] if reviews else f"{len(commits)} commit(s)"),
            content=("Git activity of this session: " + ". ".join(parts))[:1_900],
            tags=[Tag.GIT],
            confidence=0.7,
            details=details,
            line_start=min(lines),
            line_end=max(lines),
        )
    ]


# --- plans and summaries ---------------------------------------------------------------------------
def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of a markdown document or a numbered summary; [] when it has fewer than two."""
    found: list[tuple[str, list[str]]] = []
    preamble: list[str] = []
    for line in text.splitlines():
        m = _HEADING.match(line.strip()) or _NUMBERED.match(line.strip())
        if m:
            found.append((m.group(2).strip(" *:"), []))
        elif found:
            found[-1][1].append(line)
        else:
            preamble.append(line)
    out = [(h, "\n".join(b).strip()) for h, b in found]
    return out if len(out) >= 2 else []


def _plan_texts(events: list[EventDoc]) -> list[EventDoc]:
    plans = []
    for e in events:
        if e.is_sidechain:
            continue
        # an approved plan (`EventDoc.is_plan`), or a long message of three sections or more
        if e.role is Role.USER and (
            sections(e.text) if e.is_plan else len(e.text) > 400 and len(sections(e.text)) >= 3
        ):
            plans.append(e)
        elif e.role is Role.TOOL_CALL and (e.tool_name or "").lower() in PLAN_TOOLS:
            plan = e.tool_input.get("plan") if isinstance(e.tool_input, dict) else None
            if isinstance(plan, str) and sections(plan):
                plans.append(e.model_copy(update={"text": plan}))
    return plans


def plans(reading: SessionReading) -> list[Candidate]:
    out = []
    for e in _plan_texts(reading.events):
        title = _title_of(e.text)
        for place, (heading, body) in enumerate(sections(e.text)[:MAX_SECTIONS]):
            if len(body) < MIN_SECTION_CHARS:
                continue
            kind = MemoryKind.PROCEDURE if _CHECK_WORDS.search(heading) else MemoryKind.DECISION
            out.append(_section(kind, f"Plan {title}: {heading}", body, e, [Tag.PLAN], 0.6, place))
    return out


def summaries(reading: SessionReading) -> list[Candidate]:
    events = reading.events
    out = []
    requests = [set(analyze(t.request.text)) for t in reading.turns]
    for i, e in enumerate(events):
        if e.role is not Role.SUMMARY:
            continue
        # pending work of a summary the session went on from was taken up: history, not open
        continued = any(x.role is Role.USER and not x.is_sidechain for x in events[i + 1 :])
        for place, (heading, body) in enumerate(sections(e.text)[:MAX_SECTIONS]):
            if len(body) < MIN_SECTION_CHARS:
                continue
            planned = bool(_OPEN_WORDS.search(heading))
            none_left = planned and bool(_NONE_LEFT.match(body))
            pending = planned and not continued and not none_left
            # open work (tagged open when nothing came after it; what the session went on to do is
            # history, not a fact about the project) and errors are episodes
            episode = planned or _ERROR_WORDS.search(heading)
            kind = MemoryKind.EPISODE if episode else MemoryKind.FACT
            tags = [Tag.SUMMARY]
            if none_left:
                tags.append(Tag.RETOLD)
            elif planned:
                tags.append(Tag.OPEN if pending else Tag.TAKEN_UP)
            elif _retells(body, requests):
                tags.append(Tag.RETOLD)
            out.append(_section(kind, f"Session summary: {heading}", body, e, tags, 0.55, place))
    return out


def _retells(body: str, requests: list[set[str]]) -> bool:
    """Whether a summary's section retells the conversation (the user's messages, what was asked):
    most of its items say again what one of the session's requests said."""
    items = [set(analyze(ln)) for ln in body.splitlines() if len(set(analyze(ln))) >= RETOLD_MIN_TERMS]
    if not items or not requests:
        return False
    said = sum(any(len(item & r) >= RETOLD_SHARE * len(item) for r in requests) for item in items)
    return said * 2 >= len(items)


def _title_of(text: str) -> str:
    for line in text.splitlines():
        m = _HEADING.match(line.strip())
        if m:
            # "# Plan: Tree view" is named "Plan «Tree view»", not "Plan «Plan: Tree view»"
            return "«" + re.sub(r"^plan:\s*", "", m.group(2).strip(" *#"), flags=re.I)[:80] + "»"
    return ""


def _section(
    kind: MemoryKind, title: str, body: str, e: EventDoc, tags: list[str], confidence: float, place: int
) -> Candidate:
    body = "\n".join(ln.rstrip() for ln in body.splitlines() if ln.strip())
    if len(body) > SECTION_CHARS:
        body = body[: SECTION_CHARS - 1].rstrip() + "…"
    return Candidate(
        kind=kind,
        title=title[:TITLE_CHARS],
        content=body,
        tags=tags,
        confidence=confidence,
        # its place in the document: sections of one message share its lines, and a reader wants them
        # in the author's order (a plan's context and design before its file list)
        details={"source": tags[0], "section": place},
        line_start=e.line_no,
        line_end=e.last_line,
    )


# --- todos -----------------------------------------------------------------------------------------
def todos(reading: SessionReading) -> list[Candidate]:
    lists = [t for t in reading.todo_lists if not t.event.is_sidechain]
    if not lists:
        return []
    last = lists[-1].event
    open_items = list(lists[-1].open_items)
    if not open_items:
        return []
    return [
        Candidate(
            kind=MemoryKind.EPISODE,
            title="Unfinished todos: " + open_items[0][:120],
            content="Left unfinished on the session's todo list: " + "; ".join(open_items),
            tags=[Tag.TODO, Tag.OPEN],
            confidence=0.6,
            details={"source": "todo", "items": open_items},
            line_start=last.line_no,
            line_end=last.last_line,
        )
    ]


MIN_ACCOUNT_CHARS = 200  # "Done." is no account of anything


def outcome(reading: SessionReading) -> list[Candidate]:
    """What came of the session's last request, in the agent's own account: its reply that closed the
    work (no tool call after it), such as the root cause it found and the fix it committed. The
    handoff says what was asked last; this says how it ended."""
    session_turns = reading.turns
    last = session_turns[-1] if session_turns else None
    reply = last.closing_reply if last else None
    # an answer with no work before it is no account of work done; "Done." is no account at all
    if last is None or reply is None or not last.ran_tools or len(reply.text.strip()) < MIN_ACCOUNT_CHARS:
        return []
    title = "How the last request ended"
    ended = _section(MemoryKind.EPISODE, title, reply.text, reply, ["outcome"], 0.55, 0)
    if (asks := handed_over(reply.text)) and reading.uncommitted:
        # the step it left to the person, and the files it is about: a later session's `git status`
        # that lists none of them shows it taken up (`remembering.open_items`)
        ended.details["handover"] = {"asks": asks, "paths": list(reading.uncommitted[:MAX_HANDOVER_PATHS])}
    return [ended]


MAX_HANDOVER_PATHS = 40
# the agent leaves a step of keeping the work to the person: "ready for you to commit and deploy", "you'll
# need to deploy", "not pushed yet"
_HANDOVER = re.compile(
    r"\b(?:ready (?:for you )?to|when you(?:'re| are) ready,? (?:to |you can )?|you can(?: now)?"
    r"|you(?:'ll| will)? need to|remember to|don't forget to|left for you to)\s+"
    r"(?:(?:now|then|safely|go ahead and|review and|test and)\s+){0,2}"
    r"(?P<verb>commit|push|deploy|merge)\b(?:,? (?:and|&) (?P<also>commit|push|deploy|merge)\b)?"
    r"|\b(?:not|never) (?:yet )?(?:been )?(?P<undone>committed|pushed|deployed)\b|\buncommitted\b",
    re.I,
)
_BASE_FORM = {"committed": "commit", "pushed": "push", "deployed": "deploy"}


def handed_over(reply: str) -> list[str]:
    """The steps of keeping its work a reply leaves to the person (commit, push, deploy, merge)."""
    asks: set[str] = set()
    for m in _HANDOVER.finditer(reply):
        said = [w for w in (m["verb"], m["also"], m["undone"]) if w] or ["commit"]  # "uncommitted"
        asks |= {_BASE_FORM.get(w.lower(), w.lower()) for w in said}
    return sorted(asks)

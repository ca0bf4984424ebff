"""What a memory says about what: the subject/value reading the dream pass compares memories by.

Pure text rules, no store. Two memories of one kind from different sessions either
- restate one thing (`restates`: the same words, near enough, and no value of one contradicted by the
  other), or
- say that the same thing has a different value (`changed`): the same subject with another value, read
  four generic ways: a labelled line ("Deploy host: A" / "Deploy host: B"), a copula ("X is A" / "X is
  B", also "uses", "=", "→"), a request path sent elsewhere (`routes.rerouted`: "`/api/x/*` → port
  3333" / "All `/api/` requests go to the map server"), or the same sentence around a changed URL, host,
  address, path or number ("the endpoint is https://a/mcp" / "the endpoint is https://b/mcp").
Nothing here knows a project, a language or a tool: the rules read the shape of a statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cairn.pipeline.remembering.routes import rerouted
from cairn.services.project_block import REMOTE_PROGRAMS, command_steps, program

_URL = r"https?://[^\s)>\]'\"`,;]+"
_IP = r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"
_HOST = r"\b(?:[a-z0-9-]+\.)+(?:[a-z]{2,})\b(?::\d+)?(?:/[^\s)>\]'\"`,;]*)?"
_NUMBER = r"\b\d+(?:[.,]\d+)?(?:[-–]\d+(?:[.,]\d+)?)?\s?(?:km|m|ms|s|mb|gb|kb|%|px)?\b"
_VALUE = re.compile(f"(?P<url>{_URL})|(?P<ip>{_IP})|(?P<host>{_HOST})|(?P<number>{_NUMBER})", re.I)
_WORD = re.compile(r"[a-z0-9](?:[a-z0-9._/-]*[a-z0-9])?|<\w+>")
_LABEL = re.compile(
    r"^\s*[-*•]?\s*\**(?P<subject>[A-Za-z][\w ./'()-]{2,50}?)\**\s*:\s+(?P<value>\S.{0,200})$"
)
_COPULA = re.compile(
    r"^\s*(?P<subject>(?:the\s+)?[\w./'-]+(?:\s+[\w./'-]+){0,5}?)\s+"
    r"(?:is|are|is now|are now|uses|use|=|→|->|runs on|listens on|lives at|points to)\s+"
    r"(?P<value>\S.{0,200})$",
    re.I,
)
# words that say nothing about a subject on their own
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "at",
        "by",
        "with",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "it",
        "this",
        "that",
        "these",
        "those",
        "as",
        "we",
        "you",
        "i",
        "our",
        "your",
        "its",
        "not",
        "no",
        "yes",
        "do",
        "does",
        "did",
        "can",
        "will",
        "should",
        "must",
    ]
)
TEMPLATE_OVERLAP = 0.75  # the sentences around the changed values are nearly the same
RESTATE_OVERLAP = 0.6  # the consolidation's near-duplicate word overlap
MIN_SUBJECT_WORDS = 2  # "It: x" is no subject
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$", re.M)
_SHELL_NOISE = re.compile(r"\s*(?:2>&1|\|\s*(?:head|tail)(?:\s+-n)?(?:\s+-?\d+)?)\s*$")
_SHELL_LEAD = re.compile(
    r"^\s*(?:cd\s+\S+\s*&&\s*|[A-Z_][A-Z0-9_]*=\S*\s*(?:&&\s*)?|time\s+|timeout\s+\d+\s+)"
)


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@lru_cache(maxsize=4096)  # the dream pass compares each statement with every other of its kind
def values(text: str) -> tuple[tuple[str, str], ...]:
    """The (type, value) of each URL, IP address, host, and number in `text`, in order."""
    return tuple((m.lastgroup or "number", m.group(0).lower().rstrip("./")) for m in _VALUE.finditer(text))


def template(text: str) -> str:
    """`text` with each value replaced by its type: what is said around the values."""
    return _VALUE.sub(lambda m: f" <{m.lastgroup}> ", text)


def _subject(text: str) -> tuple[str, str] | None:
    """(subject, value) of a one-statement memory: its first line labelled ("X: v") or a copula ("X is v")."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    for rule in (_LABEL, _COPULA):
        m = rule.match(first)
        if m is None:
            continue
        subject = " ".join(w for w in _WORD.findall(m.group("subject").lower()) if w not in _STOP)
        if len(subject.split()) >= MIN_SUBJECT_WORDS:
            return subject, m.group("value").strip().rstrip(".").lower()
    return None


def changed(old: str, new: str) -> bool:
    """Whether `new` gives the same subject as `old` another value (see the module's docstring)."""
    if old.strip().casefold() == new.strip().casefold():
        return False
    a, b = _subject(old), _subject(new)
    if a and b and a[0] == b[0] and a[1] != b[1]:
        return not (a[1] in b[1] or b[1] in a[1])  # "A" then "A (since May)" is a restatement
    if rerouted(old, new):
        return True
    va, vb = values(old), values(new)
    if not va or not vb:
        return False
    types_a, types_b = [t for t, _ in va], [t for t, _ in vb]
    if types_a != types_b or set(va) == set(vb):
        return False
    # the same sentence around them, and the differing values are whole values, not a shared one
    # spelled twice
    ta, tb = words(template(old)) - _STOP, words(template(new)) - _STOP
    return overlap(ta, tb) >= TEMPLATE_OVERLAP and len(ta) >= 3


def _lead_and_body(text: str) -> tuple[str, str]:
    """A lead-in line ending in ":" (a template's heading: "Checks run and passing in this project:") and
    what follows it; ("", text) without one."""
    first, _, rest = text.strip().partition("\n")
    if rest.strip() and first.rstrip().endswith(":"):
        return " ".join(first.lower().split()), rest
    return "", text


def _bullets(text: str) -> frozenset[str]:
    return frozenset(" ".join(m.group(1).lower().split()) for m in _BULLET.finditer(text))


def restates(a: str, b: str) -> bool:
    """Whether two statements say the same thing: the same values, and the same words, near enough —
    under one lead-in line, its body's (a list's items all the same: a list with an item more or less is
    another list)."""
    if a.strip().casefold() == b.strip().casefold():
        return True
    if changed(a, b):
        return False
    if {v for _, v in values(a)} != {v for _, v in values(b)}:
        return False
    (lead_a, body_a), (lead_b, body_b) = _lead_and_body(a), _lead_and_body(b)
    if lead_a and lead_a == lead_b:
        a, b = body_a, body_b
    bullets_a, bullets_b = _bullets(a), _bullets(b)
    if bullets_a or bullets_b:
        return bullets_a == bullets_b
    wa, wb = words(a) - _STOP, words(b) - _STOP
    return min(len(wa), len(wb)) >= MIN_SUBJECT_WORDS and overlap(wa, wb) >= RESTATE_OVERLAP


def core_command(command: str) -> str:
    """A command less what changes between runs of the same thing: the directory it changes to first,
    environment assignments, `time`/`timeout`, `2>&1` and a trailing pager or filter."""
    c = " ".join(command.split())
    for rule in (_SHELL_LEAD, _SHELL_NOISE):
        while (cut := rule.sub("", c, count=1)) != c and _quotes_balanced(cut):
            c = cut.strip()
    return c


def _quotes_balanced(command: str) -> bool:
    """A cut that leaves a quote open cut inside a quoted argument (`ssh host "a | head"`)."""
    return command.count('"') % 2 == 0 and command.count("'") % 2 == 0


_MOVE = re.compile(r"^\s*(?:cd|pushd)\s+(\S+)\s*$")
_SWITCH = re.compile(r"^--?[A-Za-z]")
_FILE = re.compile(r"\.[A-Za-z]\w{0,5}$")  # `main.rs`, `app_test.exs`: a word that names a file
_OUTPUT_SWITCHES = frozenset({"-o", "--output", "--out", "--out-dir", "--outdir", "--target-dir"})
_WRAPPER_WORDS = frozenset({"sudo", "time", "nice", "env", "command", "exec", "nohup", "timeout"})


@dataclass(frozen=True, slots=True)
class _Step:
    head: tuple[str, ...]  # the program and its subcommand words: `cargo build`, `npm run lint`
    targets: frozenset[str]  # the paths and files it works on, as written from anywhere


def _target(word: str) -> str | None:
    """The path a word names, as written from anywhere; "" for the project as a whole (`./...`, `.`);
    None for a word that names no path."""
    w = word.strip("\"'")
    if w in {".", "./"} or ("/" not in w and not _FILE.search(w)):
        return "" if w in {".", "./"} else None
    w = w.removeprefix("./").rstrip("/")
    return w if w.strip("./") else ""


def _step(step: str) -> _Step:
    words = [w for w in step.split() if not _ASSIGNED.match(w)]
    while words and words[0] in _WRAPPER_WORDS:  # `timeout 60 mix test` runs `mix test`
        words = words[2:] if words[0] == "timeout" and words[1:2] and words[1][:1].isdigit() else words[1:]
    head: list[str] = []
    targets: set[str] = set()
    valued = False  # the word before was a switch that may take a value
    output = False  # the word before says where the output goes (`-o bin/app`): no path worked on
    for i, w in enumerate(words):
        if _SWITCH.match(w):
            valued, output = "=" not in w, w in _OUTPUT_SWITCHES
            continue
        if (t := _target(w)) is not None and i > 0:
            if t and not output:
                targets.add(t)
        elif not valued:
            head.append(w)  # a word right after a switch that names no path is its value (`-p core`)
        valued = output = False
    if head:
        head[0] = program(head[0])
    return _Step(tuple(head), frozenset(targets))


_ASSIGNED = re.compile(r"^[A-Za-z_]\w*=\S*$")


def _where(command: str) -> str | None:
    """The folder a line moves to before it works (`cd web && npm test`), by its last name."""
    found = None
    for part in re.split(r"\s*(?:&&|;|\|\|)\s*", command):
        if m := _MOVE.match(part):
            found = m.group(1).strip("\"'").rstrip("/").rsplit("/", 1)[-1] or None
    return found


def _same_path(a: str, b: str) -> bool:
    """`go/cmd/x` and `cmd/x` name one folder seen from two places (one ends with the other)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _same_paths(a: frozenset[str], b: frozenset[str]) -> bool:
    return all(any(_same_path(x, y) for y in b) for x in a) and all(
        any(_same_path(y, x) for x in a) for y in b
    )


def same_command(a: str, b: str) -> bool:
    """Whether two command lines do the same thing, less how a session happened to run them: the folder
    it moved to, its environment, wrappers (`time`, `timeout 60`), the program's path
    (`/usr/local/go/bin/go` is `go`), switches and their values (`-v`, `--release`, `-p core`, `-o out`),
    how its output was shown (`2>&1 | tail`), where its output goes (`-o bin/app`) and what it printed
    (`&& echo ok`). Each working step runs the same program and subcommand on the same paths, written
    from the project's root or from a folder in it (`./go/cmd/x` is `./cmd/x`): `cargo build --release`
    is `cargo build --release -p core`, but `mix test` is not `mix test test/a_test.exs` (a narrower
    run). A folder the line moved to counts when no path says what it works on (`cd web && npm test` is
    not `cd api && npm test`). A request to another machine (`curl`, `ssh`) is what all its words make
    it: only the same line is the same."""
    if " ".join(a.split()) == " ".join(b.split()):
        return True
    steps_a, steps_b = command_steps(a), command_steps(b)
    if not steps_a or len(steps_a) != len(steps_b):
        return False
    if any(program(s) in REMOTE_PROGRAMS for s in (*steps_a, *steps_b)):
        return False
    named = False
    for x, y in zip(map(_step, steps_a), map(_step, steps_b), strict=True):
        if not x.head or x.head != y.head or not _same_paths(x.targets, y.targets):
            return False
        named = named or bool(x.targets or y.targets)
    where_a, where_b = _where(a), _where(b)
    return named or not (where_a and where_b and where_a != where_b)


def same_procedure(a: tuple[str, dict, set[str]], b: tuple[str, dict, set[str]]) -> bool:
    """Two procedures, each (content, details, tags), of one command learned the same way: the same kind
    of step (tags) of the same command (`same_command`); for the fix of a failure, the same failure fixed
    the same way."""
    (content_a, details_a, tags_a), (content_b, details_b, tags_b) = a, b
    ca, cb = details_a.get("command"), details_b.get("command")
    if not (ca and cb and tags_a == tags_b and same_command(str(ca), str(cb))):
        return False
    fixes = details_a.get("fixes_error"), details_b.get("fixes_error")
    return fixes[0] == fixes[1] and (not any(fixes) or restates(content_a, content_b))

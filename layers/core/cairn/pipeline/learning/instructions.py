"""The rules a session wrote into the files every agent reads as the project's standing instructions.

`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.github/copilot-instructions.md`, `.cursorrules`, `.cursor/rules/*`,
`.windsurfrules`: what an edit that succeeded put in one of them is a rule the project now keeps for every
agent. The person asked for it or accepted it, and a tool confirmed the write. Every project driven by agents
keeps such a file, in whatever language its people write, so nothing here reads wording: a rule is a line
the edit added (a list item, a paragraph line, a heading that states a whole rule), named with the heading
it sits under. Only edits to a file the project already had count: a file read is the file's text (often a
dependency's), a file written whole is the agent's account of the project (`/init`), and a line reworded is
a rule changed, not added.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import TITLE_CHARS
from cairn.pipeline.models import Candidate
from cairn.pipeline.reading.session import SessionReading
from cairn.pipeline.reading.shell import FileChange, changes_by_file, in_checkout, succeeded_edits

INSTRUCTION_FILES = frozenset(
    {"claude.md", "agents.md", "gemini.md", "copilot-instructions.md", ".cursorrules", ".windsurfrules"}
)
INSTRUCTION_FOLDERS = (".cursor/rules/", ".claude/rules/")
MAX_SECTIONS = 8  # per session: a file written whole is a document, its first sections are enough
MIN_WORDS = 4  # "## Testing", "- Go 1.22" name things; a rule says something about them
HEADING_RULE_WORDS = 5  # "### API keys are never embedded in builds": a heading that is a rule itself
RULE_CHARS = 1_000

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+(?:\[[ xX]\]\s+)?")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NOT_PROSE = re.compile(r"^\s*(?:-{3,}|={3,}|<!--|<\w)")  # rules, comments, markup
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|?\s*$")
_SEPARATOR_CELL = re.compile(r"^\s*:?-+:?\s*$")


def is_instruction_file(path: str) -> bool:
    posix = path.replace("\\", "/")
    return PurePosixPath(posix).name.lower() in INSTRUCTION_FILES or any(
        folder in posix for folder in INSTRUCTION_FOLDERS
    )


def instruction_rules(reading: SessionReading) -> list[Candidate]:
    """A preference per section the session's edits added to the project's instruction files: the rules
    under one heading are one memory (a heading is what the file groups them by, and the block shows a
    memory as one line)."""
    found: list[Candidate] = []
    seen: set[str] = set()
    edits = [
        (edit, change)
        for edit in succeeded_edits(reading.events)
        for change in changes_by_file(edit)
        if is_instruction_file(change.path) and not change.whole
    ]
    for edit, change in edits:
        where = in_checkout(change.path, reading.checkouts)
        for heading, stated, rules in sections_of(rules_of(new_lines(change))):
            content = "; ".join(rules)
            if stated:  # the heading is a rule itself, the lines under it its detail
                content = f"{heading}: {content}" if rules else heading
            key = " ".join(content.lower().split())
            if key in seen or len(found) >= MAX_SECTIONS:
                continue
            seen.add(key)
            found.append(
                Candidate(
                    kind=MemoryKind.PREFERENCE,
                    content=content[:RULE_CHARS],
                    title=(f"{where}: {heading}" if heading and not stated else where)[:TITLE_CHARS],
                    confidence=0.85,
                    details={"source": "instructions", "path": where},
                    line_start=edit.line_no,
                    line_end=edit.last_line,
                )
            )
    return found


def new_lines(change: FileChange) -> list[str]:
    """The lines an edit added that are no rewording of a line it took out: "targets version 1.105"
    replacing "targets version 1.110" changes a rule the file had, it adds none."""
    removed = [_words(line) for line in change.removed if line.strip()]
    return [
        line
        for line in change.added
        if not any(len(_words(line) & old) * 2 > len(_words(line) | old) for old in removed)
    ]


def _words(line: str) -> set[str]:
    return set(re.findall(r"\w+", line.lower()))


def sections_of(rules: list[tuple[str | None, str]]) -> list[tuple[str | None, bool, list[str]]]:
    """(heading, whether the heading states a rule, the rules under it), in the order written."""
    out: list[tuple[str | None, bool, list[str]]] = []
    for heading, rule in rules:
        if heading is None and out and out[-1][0] is None:
            out[-1][2].append(rule)
        elif heading is None:  # a heading that states a rule opens its own section
            out.append((rule, True, [])) if _states_something(rule) else out.append((None, False, [rule]))
        elif out and out[-1][0] == heading:
            out[-1][2].append(rule)
        else:
            out.append((heading, False, [rule]))
    return out


def rules_of(lines: list[str]) -> list[tuple[str | None, str]]:
    """(the heading it sits under, the rule) for each item of added markdown that states a rule.

    An item is a list entry or a paragraph, hard-wrapped lines joined. A line that ends in a colon leads
    into the list or table under it: their short entries are said with it, as one rule."""
    reader = _Markdown()
    for line in lines:
        reader.read(line)
    reader.close()
    reader.flush()
    return reader.rules


class _Markdown:
    def __init__(self) -> None:
        self.rules: list[tuple[str | None, str]] = []
        self.heading: str | None = None
        self.item: list[str] = []
        self.lead: list[str] = []  # a lead-in and the short entries under it
        self.fenced = False

    def read(self, line: str) -> None:
        if _FENCE.match(line):
            self.close()
            self.fenced = not self.fenced
        elif self.fenced:
            return
        elif row := _TABLE_ROW.match(line):
            self.close()
            self.row([c.strip() for c in row.group(1).strip("|").split("|")])
        elif not line.strip() or _NOT_PROSE.match(line):
            self.close()
        elif m := _HEADING.match(line):
            self.close()
            self.flush()
            self.heading = _plain(m.group(2))
            if _states_something(self.heading):
                self.rules.append((None, self.heading))
        else:
            if _MARKER.match(line):
                self.close()
                line = _MARKER.sub("", line, count=1)
            self.item.append(line)

    def row(self, cells: list[str]) -> None:
        if all(_SEPARATOR_CELL.match(c) for c in cells):
            if len(self.lead) > 1:  # the row above was the table's header
                self.lead.pop()
        elif self.lead:  # a table under a lead-in is the list it leads into
            self.lead.append(" ".join(c for c in cells if c))

    def close(self) -> None:
        rule = _plain(" ".join(self.item))
        self.item.clear()
        if not rule:
            return
        if rule.endswith(":"):
            self.flush()
            self.lead.append(rule)
        elif self.lead and len(rule.split()) < MIN_WORDS:
            self.lead.append(rule)
        elif len(rule.split()) >= MIN_WORDS:
            self.flush()
            self.rules.append((self.heading, rule))

    def flush(self) -> None:
        if len(self.lead) > 1:  # "Commits use these prefixes: `feat:` Features; `sec:` Security"
            self.rules.append((self.heading, f"{self.lead[0]} {'; '.join(self.lead[1:])}"))
        self.lead.clear()


def _states_something(heading: str) -> bool:
    """A heading written as a sentence ("API keys are never shipped in release builds"), not a title
    ("Build, Test, and Development Commands"): long, and most of its words not capitalised."""
    words = [w for w in heading.split() if w[:1].isalpha()]
    return len(words) >= HEADING_RULE_WORDS and sum(w[0].isupper() for w in words) * 2 < len(words)


def _plain(text: str) -> str:
    """A markdown line as read: quote marks and emphasis taken off, spaces folded."""
    text = re.sub(r"^\s*>\s?", "", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    return " ".join(text.split())

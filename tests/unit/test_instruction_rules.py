"""The rules a session's edits wrote into the project's agent instruction files become its conventions.

The edits are shaped as each agent writes them: Claude Code's `Edit` (old and new string, a hard-wrapped
section with a table, from a Go project's CLAUDE.md), a Codex `apply_patch` that adds an AGENTS.md, an
OpenCode patch touching two files, a Portuguese rule whose heading states it.
"""

from __future__ import annotations

import pytest
from cairn.domain.models import MemoryKind
from cairn.pipeline.learning.instructions import instruction_rules, is_instruction_file, rules_of
from cairn.pipeline.learning.learners import WHOLE_SESSION
from cairn.pipeline.reading.session import read_events

from tests.unit.session_events import tool_run

pytestmark = pytest.mark.unit

ROOT = "/home/dev/app"
CLAUDE_EDIT = {
    "file_path": f"{ROOT}/CLAUDE.md",
    "old_string": "## Development Guidelines",
    "new_string": "\n".join(
        [
            "## Development Guidelines",
            "",
            "### Commit Message Convention",
            "",
            "Commits must use conventional commit prefixes so the release tool can generate the",
            "changelog automatically. Only commits with these prefixes appear in releases:",
            "",
            "| Prefix  | Changelog group  |",
            "|---------|------------------|",
            "| `feat:` | New Features     |",
            "| `sec:`  | Security updates |",
            "",
            "### Testing",
            "- Run `make test` before every commit; a red test blocks the merge.",
            "- Go 1.22",
            "```bash",
            "make test -- never a rule, only an example of one",
            "```",
        ]
    ),
}


def rules(*edits: tuple[str, dict, str]) -> list:
    events = []
    for i, (tool, args, output) in enumerate(edits):
        events += tool_run(10 * (i + 1), tool, args, output)
    return instruction_rules(read_events(events, ROOT))


def test_an_edit_of_claude_md_gives_a_rule_per_section_it_added_with_the_table_its_lead_in_names():
    found = rules(("Edit", CLAUDE_EDIT, "The file has been updated."))
    assert [c.kind for c in found] == [MemoryKind.PREFERENCE] * 2
    convention, testing = found
    assert convention.title == "CLAUDE.md: Commit Message Convention"
    assert convention.content.startswith("Commits must use conventional commit prefixes so the release tool")
    assert "`feat:` New Features; `sec:` Security updates" in convention.content
    assert "Prefix" not in convention.content  # the table's header row
    assert testing.title == "CLAUDE.md: Testing"
    assert testing.content == "Run `make test` before every commit; a red test blocks the merge."
    assert convention.details == {"source": "instructions", "path": "CLAUDE.md"}


def test_a_heading_that_states_a_rule_leads_its_section_and_the_same_section_added_twice_is_one_rule():
    edit = {
        "file_path": f"{ROOT}/AGENTS.md",
        "old_string": "- [ ] Build sem warnings",
        "new_string": "- [ ] Build sem warnings\n\n"
        "### [C004] API keys nunca devem ser embarcadas em builds de produção\n"
        "- `Secrets.plist` está no `.gitignore` e nunca é commitado\n"
        "- Toda navegação para a tela de chaves está dentro de `#if DEBUG`",
    }
    found = rules(("Edit", edit, "ok"), ("Edit", edit, "ok"))
    assert [(c.title, c.content) for c in found] == [
        (
            "AGENTS.md",
            "[C004] API keys nunca devem ser embarcadas em builds de produção: `Secrets.plist` está no "
            "`.gitignore` e nunca é commitado; "
            "Toda navegação para a tela de chaves está dentro de `#if DEBUG`",
        )
    ]


def test_an_edit_a_tool_refused_writes_no_rule():
    events = tool_run(10, "Edit", CLAUDE_EDIT, "String to replace not found in file.", error=True)
    assert instruction_rules(read_events(events, ROOT)) == []


def patch(*sections: str) -> dict:
    return {"patchText": "\n".join(["*** Begin Patch", *sections, "*** End Patch"])}


def test_only_the_instruction_file_of_a_patch_that_touches_two_files_gives_rules():
    edit = patch(
        f"*** Update File: {ROOT}/package.json",
        "@@",
        '+    "description": "a line long enough to read as prose if it were markdown",',
        f"*** Update File: {ROOT}/AGENTS.md",
        "@@",
        " This extension targets version 1.110 of the editor.",
        "+Run the whole test harness before you call a change done.",
    )
    found = rules(("apply_patch", edit, "Success. Updated the following files"))
    assert [c.content for c in found] == ["Run the whole test harness before you call a change done."]
    assert found[0].details["path"] == "AGENTS.md"


def test_a_rule_reworded_or_a_file_written_whole_adds_no_rule():
    reworded = patch(
        f"*** Update File: {ROOT}/AGENTS.md",
        "@@",
        "-This extension targets version 1.110 of the editor and nothing older.",
        "+This extension targets version 1.105 of the editor and nothing older.",
    )
    written = patch(
        f"*** Add File: {ROOT}/AGENTS.md", "+# Repository Guidelines", "+Use tabs for indentation here."
    )
    claude_write = {
        "file_path": f"{ROOT}/CLAUDE.md",
        "content": "## Overview\nThis Go service ingests metrics.",
    }
    assert (
        rules(("apply_patch", reworded, "ok"), ("apply_patch", written, "ok"), ("Write", claude_write, "ok"))
        == []
    )


def test_a_heading_written_as_a_sentence_is_a_rule_in_any_language_and_a_title_is_not():
    added = [
        "### [C004] API keys nunca devem ser embarcadas em builds de produção",
        "## Build, Test, and Development Commands",
        "- `pnpm check-types`: run strict TypeScript checks only.",
    ]
    assert rules_of(added) == [
        (None, "[C004] API keys nunca devem ser embarcadas em builds de produção"),
        ("Build, Test, and Development Commands", "`pnpm check-types`: run strict TypeScript checks only."),
    ]


def test_a_file_read_or_an_ordinary_document_edited_gives_no_rule():
    read = tool_run(
        10, "Read", {"file_path": f"{ROOT}/vendor/lib/AGENTS.md"}, "- Always push to main directly."
    )
    doc = {**CLAUDE_EDIT, "file_path": f"{ROOT}/docs/guide.md"}
    assert instruction_rules(read_events([*read, *tool_run(20, "Edit", doc, "ok")], ROOT)) == []


@pytest.mark.parametrize(
    "path",
    [
        "CLAUDE.md",
        "/r/AGENTS.md",
        "/r/GEMINI.md",
        "/r/.github/copilot-instructions.md",
        "/r/.cursor/rules/go.mdc",
    ],
)
def test_every_agent_s_instruction_file_is_known(path):
    assert is_instruction_file(path)


def test_the_learner_runs_with_the_whole_session_learners():
    assert instruction_rules in WHOLE_SESSION

"""What an edit put in (pipeline.shell.added_text), over the edit tools' real input shapes."""

from __future__ import annotations

import pytest
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.shell import added_text, edited_paths, is_edit
from cairn.transcripts import parse_transcript
from cairn.transcripts.model import Role

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit


def _edit(tool: str, tool_input: dict) -> EventDoc:
    return EventDoc(seq=1, line_no=1, role=Role.TOOL_CALL, tool_name=tool, tool_input=tool_input)


def test_a_replacement_puts_in_only_the_lines_its_old_text_did_not_have():
    edit = _edit(
        "Edit",
        {
            "file_path": "a.go",
            "old_string": "if err != nil {\n}",
            "new_string": "if err != nil {\n  return err\n}",
        },
    )
    assert added_text(edit) == "return err"


def test_a_multi_edit_puts_in_what_each_of_its_edits_added():
    edits = [{"old_string": "a", "new_string": "a\nb"}, {"old_string": "c", "new_string": "d"}]
    assert added_text(_edit("MultiEdit", {"file_path": "x.py", "edits": edits})) == "b d"


def test_a_new_file_puts_in_its_text_and_a_patch_its_added_lines():
    assert added_text(_edit("Write", {"file_path": "n.md", "content": "# Notes\n\nhello"})) == "# Notes hello"
    patch = "*** Begin Patch\n*** Update File: a.ts\n@@\n-old()\n+new()\n context\n*** End Patch\n"
    assert added_text(_edit("apply_patch", {"input": patch})) == "new()"


def test_an_edit_that_only_removed_lines_put_in_nothing():
    assert added_text(_edit("Edit", {"file_path": "a.ts", "old_string": "a\nb", "new_string": "a"})) == ""


def test_opencodes_patch_edit_from_a_real_export_names_its_file_and_what_it_put_in():
    # OpenCode runs GPT models' edits as `apply_patch` with {"patchText"} (real 1.4.3 export, see SOURCE.md)
    export = TRANSCRIPTS / "opencode" / "session-bridge" / "ses_27a3283eeffe2okXvUQaxKJ0Nw.json"
    events = parse_transcript(export.read_bytes()).events
    [patch] = [e for e in events if e.role is Role.TOOL_CALL and e.tool_name == "apply_patch"]
    edit = EventDoc.of(patch)

    assert is_edit(edit) and edited_paths(edit) == ["LICENSE.md"]
    assert added_text(edit).startswith(
        "MIT License Copyright (c) 2026 kirk-agbenyegah Permission is hereby granted"
    )

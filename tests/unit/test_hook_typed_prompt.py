"""The prompt hook searches with what the person typed, not with context hooks already put before it."""

from __future__ import annotations

import pytest
from cairn.cli.hooks_context import typed_prompt

pytestmark = pytest.mark.unit


def test_gemini_clis_first_prompt_loses_the_escaped_session_start_block_it_carries():
    # Gemini CLI hands BeforeAgent the first prompt with the SessionStart output in front, tags escaped
    prompt = (
        "<hook_context>&lt;cairn-context&gt;\n# Cairn memory for acme/shop\n- Use pnpm [mem_1]\n"
        "&lt;/cairn-context&gt;\n</hook_context>\n\nSet up the orders database the way we agreed."
    )
    assert typed_prompt(prompt) == "Set up the orders database the way we agreed."


def test_a_raw_cairn_block_and_an_unclosed_one_are_dropped_too():
    assert typed_prompt("<cairn-context>\nold notes\n</cairn-context>\nfix the build") == "fix the build"
    assert typed_prompt("fix the build <cairn-context> cut off") == "fix the build"


def test_a_plain_prompt_is_kept_as_typed():
    assert typed_prompt("  why does checkout time out?  ") == "why does checkout time out?"

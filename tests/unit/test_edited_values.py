"""The values a session's edits took out of the files (pipeline.reading.edited_values), and the values a
statement gives as current (reading.edited_values.stated_values)."""

from __future__ import annotations

import pytest
from cairn.pipeline.reading.edited_values import edited_out, stated_values, taken_out_after, value_tokens

from tests.unit.session_events import tool_run

pytestmark = pytest.mark.unit


def edit(seq: int, old: str, new: str, error: bool = False):
    return tool_run(
        seq, "Edit", {"file_path": "/app/prompt.go", "old_string": old, "new_string": new}, "ok", error
    )


def test_a_value_an_edit_replaced_is_edited_out_and_one_it_kept_is_not():
    events = edit(
        1,
        "Village: 5000-10000m | City: 15-25km | Metro: 30-50km",
        "Village/Town: 25-50km | City: 50km | Metro: 30-50km",
    )
    assert edited_out(events) == ("15-25km",)


def test_a_value_another_edit_of_the_session_put_back_or_a_refused_edit_took_out_is_not_edited_out():
    moved = [*edit(1, "timeout = 500ms", "timeout = TIMEOUT"), *edit(3, "", "const TIMEOUT = 500ms")]
    refused = edit(1, "url = https://api.acme.dev/v1", "url = https://books.acme.dev/v1", error=True)
    assert edited_out(moved) == () and edited_out(refused) == ()


def test_a_codex_patch_takes_out_its_minus_lines_values_less_its_context_and_plus_lines():
    patch = (
        '*** Begin Patch\n*** Update File: config/prod.exs\n@@\n config :app, host: "10.0.0.5"\n'
        '-config :app, endpoint: "https://old.acme.dev/api"\n+config :app, endpoint: "https://new.acme.dev/api"\n'
        "*** End Patch"
    )
    events = tool_run(1, "apply_patch", {"input": patch}, "Success")
    assert edited_out(events) == ("https://old.acme.dev/api",)


def test_values_are_read_however_they_are_spelled():
    assert value_tokens("a 15–25 km radius, 2 GB, 10.0.0.7:8080, https://x.org/a.") == {
        "15-25km",
        "2gb",
        "10.0.0.7:8080",
        "https://x.org/a",
    }


@pytest.mark.parametrize(
    ("statement", "current"),
    [
        ("Village/Town: 25–50km (was 5–10km) — a 5× increase", {"25-50km"}),
        ("Changed the pool timeout from 500ms to 2000ms", {"2000ms"}),
        ("Before: 1.5km radius → center only; After: uses 15-25km radius", {"15-25km"}),
        ("Uses 4GB instead of 2GB now", {"4gb"}),
    ],
)
def test_a_statement_gives_as_current_the_values_it_does_not_say_were(statement, current):
    assert stated_values(statement) == current


def test_an_opencode_edit_is_read_in_its_own_field_names():
    from cairn.pipeline.reading.session import read_events

    args = {
        "filePath": "/home/me/app/config.ts",
        "oldString": "timeout: 500ms",
        "newString": "timeout: 2000ms",
    }
    events = tool_run(1, "edit", args, "Edit applied successfully.")
    reading = read_events(events, "/home/me/app")
    assert reading.edited_out == ("500ms",) and reading.uncommitted == ("config.ts",)


def test_what_a_later_edit_took_out_is_known_from_each_point_of_the_session():
    events = [
        *edit(1, "terms = https://fittoday.example/terms", "terms = https://apple.example/eula"),
        *edit(3, "cache = 2gb", "cache = 4gb"),
    ]
    after = taken_out_after(events)
    assert after(0) == {"https://fittoday.example/terms", "2gb"}
    assert after(2) == {"2gb"} and after(4) == frozenset()

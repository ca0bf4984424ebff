"""The values the agent reported in its account of work a tool confirmed (pipeline.learning.reports)."""

from __future__ import annotations

import json

import pytest
from cairn.domain.models import MemoryKind
from cairn.domain.vocabulary import Tag
from cairn.pipeline.learning.learners import WHOLE_SESSION, learn
from cairn.pipeline.learning.reports import reported_facts, statements
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.session import read_events
from cairn.transcripts import parse_transcript
from cairn.transcripts.model import Role

from tests.unit.session_events import ran, tool_run

pytestmark = pytest.mark.unit


def ev(seq: int, role: Role, text: str = "") -> EventDoc:
    return EventDoc(seq=seq, line_no=seq, role=role, text=text)


def facts_of(events: list[EventDoc]) -> list[str]:
    return [c.content for c in reported_facts(read_events(events))]


# the closing account of a Claude Code turn, as the agent wrote it (a real report's shape)
CLOSING = (
    "Pushed. The changes:\n\n"
    "- **Village/Town: 25–50km** (was 5–10km) — a 5× increase\n"
    '- Added "when in doubt, use a LARGER radius" to the system prompt\n'
    "- Both `sensor_current` and `query_radiation` tool descriptions now say to use large radii\n\n"
    "Want me to also update `list_sensors`?"
)


def test_a_closing_report_of_confirmed_work_keeps_its_changed_values_first():
    events = [
        ev(1, Role.USER, "make the village radius bigger, 50km maybe"),
        *tool_run(2, "Edit", {"file_path": "/src/app/prompt.go", "old_string": "a", "new_string": "b"}, "ok"),
        *ran(4, "git commit -am 'radius' && git push", "main -> main"),
        ev(6, Role.ASSISTANT, CLOSING),
    ]

    found = reported_facts(read_events(events))

    assert found[0].content == "Village/Town: 25–50km (was 5–10km) — a 5× increase"
    assert found[0].kind is MemoryKind.FACT and Tag.REPORTED in found[0].tags
    assert found[0].details["changed"] is True and "25–50km" in found[0].details["values"]
    assert found[0].line_start == 6
    # the offer that closes the reply is no statement of what is
    assert not any("Want me" in c.content for c in found)


def test_an_answer_after_only_looking_around_reports_no_work():
    events = [
        ev(1, Role.USER, "where is the binary deployed?"),
        *ran(2, "cat .github/workflows/deploy.yml", "rsync ... /srv/app/bin"),
        ev(4, Role.ASSISTANT, "The binary is stored at `/srv/app/bin/server` on the host."),
    ]

    assert facts_of(events) == []


def test_work_a_tool_refused_is_not_confirmed():
    events = [
        ev(1, Role.USER, "set the port to 8080"),
        *tool_run(2, "Edit", {"file_path": "/src/config.toml"}, "File has not been read yet", error=True),
        ev(4, Role.ASSISTANT, "Changed the port from `8000` to `8080` in `config.toml`."),
    ]

    assert facts_of(events) == []


def test_a_key_value_block_is_one_statement_so_a_new_value_keeps_its_subject():
    reply = (
        "Excellent! The secret has been successfully updated!\n\n"
        "**Repository:** acme/shop\n**Secret:** `DEPLOY_HOST`\n**New Value:** `10.20.30.40`\n\n"
        "The next deploy will use the IP address `10.20.30.40` for SSH."
    )
    events = [
        ev(1, Role.USER, "use the IP for the deploy host"),
        *ran(2, 'gh secret set DEPLOY_HOST --body "10.20.30.40"', "✓ Set secret DEPLOY_HOST"),
        ev(4, Role.ASSISTANT, reply),
    ]

    assert facts_of(events) == ["Secret: `DEPLOY_HOST`; New Value: `10.20.30.40`"]


@pytest.mark.parametrize(
    "line",
    [
        "The changes should be live at https://example.dev/app/ in ~2-3 minutes!",  # about to happen
        "Cache invalidation complete! Please try again now at https://example.dev/app/",  # advice
        "`src/main.rs`",  # a value alone says nothing about it
        "Commit: `ef1fc24`",  # the session's git activity says its commits
        "Would you like me to set `POOL_SIZE` to 20?",  # an offer
        "This might be caused by `ulimit -n` being 1024",  # a hedge
        "Added the retry loop and tests",  # no value to check
        "All `/api/auth/*` endpoints are returning 404 because the proxy has no route",  # a problem seen
        "Perfect! The deploy to `10.0.0.7` has completed and is fully verified.",  # a cheer
        "Database has fresh data: `sensor:42` reported at 14:50 today",  # the moment's state
        "File exists at `/root/.config/agent/auth.json`",  # a look of the moment
        "The `priv/static/cache_manifest.json` file exists in the release",  # an Elixir project
        # what a fix still needs is a plan (a Safecast session's reply, word for word)
        "This requires a small code change to detect the `CloudFront-*` headers and buffer the response "
        "accordingly.",
        "The Gradle build needs a further dependency update for `jakarta.servlet` 6",  # a Java project
        # a label over a list of names says nothing about them (word for word, then a Rust project's)
        "Parameters: `direction`, `limit`, `min_lat`, `max_lat`, `min_lon`, `max_lon`",
        "Features: `serde`, `tokio`, `tracing`",
    ],
)
def test_what_is_no_checkable_statement_of_what_is_is_left_out(line):
    assert statements(line) == []


def test_code_blocks_and_tables_are_no_statements_but_code_a_line_quotes_keeps_its_link():
    reply = (
        "Done:\n```bash\nexport URL=https://x.dev\n```\n"
        "| Size | Radius |\n|---|---|\n| Village | 5000-10000m |\n"
        "- Every id MUST be a map link: `[id](https://maps.example.org/?lat=LAT&zoom=15)`\n"
        "- Moved the warning to a new [`_hint`](src/api.py#L12) field in `src/api.py`"
    )

    assert statements(reply) == [
        "Moved the warning to a new `_hint` field in `src/api.py`",
        "Every id MUST be a map link: `[id](https://maps.example.org/?lat=LAT&zoom=15)`",
    ]


def codex_line(kind: str, payload: dict) -> dict:
    return {"timestamp": "2026-02-23T12:19:42.561Z", "type": kind, "payload": payload}


def test_a_codex_rollout_of_an_elixir_project_gives_the_values_its_final_message_reports():
    """Another agent's format and another stack: a Codex `apply_patch` that succeeded, then its report."""
    say = lambda role, text: codex_line(  # noqa: E731
        "response_item",
        {
            "type": "message",
            "role": role,
            "content": [{"type": "output_text" if role == "assistant" else "input_text", "text": text}],
        },
    )
    lines = [
        codex_line("session_meta", {"id": "s1", "cwd": "/home/dev/ledger", "originator": "codex_cli_rs"}),
        say("user", "Raise the Repo pool size and point the ledger at the v2 API"),
        codex_line(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_1",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: config/runtime.exs\n@@\n"
                "-pool_size: 10\n+pool_size: 20\n*** End Patch",
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_1",
                "output": json.dumps({"output": "Success. Updated files", "metadata": {"exit_code": 0}}),
            },
        ),
        say(
            "assistant",
            "Updated `config/runtime.exs`:\n"
            "- `pool_size` is now 20 (was 10)\n"
            "- Ledger base URL changed from https://ledger.internal/v1 to https://ledger.internal/v2\n"
            "Run `mix test` to confirm.",
        ),
    ]
    parsed = parse_transcript("".join(json.dumps(x) + "\n" for x in lines).encode())
    events = [EventDoc.of(e) for e in parsed.events]

    found = [c for c in learn(read_events(events), WHOLE_SESSION) if Tag.REPORTED in c.tags]

    assert parsed.agent == "codex"
    assert [c.content for c in found] == [
        "Ledger base URL changed from https://ledger.internal/v1 to https://ledger.internal/v2",
        "`pool_size` is now 20 (was 10)",
    ]
    assert all(c.details["source"] == "agent" for c in found)


def test_a_statement_whose_values_the_session_already_gave_is_not_said_again():
    first = "Changed the default sort to `marker_count` instead of `upload_count`"
    events = [
        ev(1, Role.USER, "sort by markers"),
        *tool_run(2, "Edit", {"file_path": "/srv/stats.py"}, "ok"),
        ev(4, Role.ASSISTANT, first),
        ev(5, Role.USER, "and document it"),
        *tool_run(6, "Edit", {"file_path": "/srv/README.md"}, "ok"),
        ev(8, Role.ASSISTANT, "The `marker_count` field shows individual measurement points"),
    ]

    assert facts_of(events) == [first]


def test_names_in_code_with_words_of_their_own_and_a_need_met_are_kept():
    assert statements("`upload_count`: Number of track files uploaded") != []
    assert statements('`group_by` parameter - Can group by `"user"` or `"device"`') != []
    assert statements("Fixed: the worker no longer needs a restart after `config.exs` changes") != []


def test_a_problem_the_statement_says_was_fixed_is_kept():
    assert statements("Fixed the 502 error: added the `ANTHROPIC_API_KEY` GitHub secret") != []


@pytest.mark.parametrize(
    "line",
    [
        # Claude Code, a Go project: why a query broke, not what holds now
        "The monthly stats query was using PostgreSQL-specific syntax (`NOW() - INTERVAL`) that didn't"
        " work correctly when DuckDB queries the attached database.",
        # Codex, an Elixir project
        "The `Repo.insert_all/3` call in `lib/shop/import.ex` does not work with the `:on_conflict` option",
    ],
)
def test_an_account_of_what_did_not_work_is_the_problem_not_a_fact(line):
    assert statements(line) == []


def test_a_word_inside_code_says_nothing_of_whether_the_statement_reports_a_change():
    events = [
        ev(1, Role.USER, "hide readings from the future"),
        *tool_run(2, "Edit", {"file_path": "/srv/sensor.go", "old_string": "a", "new_string": "b"}, "ok"),
        ev(4, Role.ASSISTANT, "Sensor query filters with `WHERE measured_at <= NOW()` in `sensor.go`"),
    ]

    found = reported_facts(read_events(events))

    assert [c.details["changed"] for c in found] == [False]


def test_a_heading_titles_the_lines_under_it_and_is_no_statement():
    reply = (
        "## Summary of Changes\n\n### Solution: New `top_uploaders` Tool\n\n"
        "I created a dedicated tool that counts `uploads.username` per user\n"
        "# Fixed: `cargo build` targets `x86_64-unknown-linux-musl`\n"
    )

    assert statements(reply) == ["I created a dedicated tool that counts `uploads.username` per user"]


def test_a_listed_correction_from_wrong_to_right_is_one_change_under_its_lead_in():
    # Claude Code's shape: the check marks pair what was wrong with what is right
    reply = (
        "✅ **Fixed and deployed!**\n\n## The Problem\nThe query was using incorrect column names:\n"
        "- ❌ `latitude`, `longitude` → ✅ `lat`, `lon`\n- ❌ `track_id` → ✅ `trackid`\n\n"
        "These didn't match the actual database schema."
    )
    # another agent's plain marks, a Rust project
    other = "Renamed the settings keys:\n* ✗ `max_conn` -> ✓ `pool.max_connections`\n"

    assert statements(reply) == [
        "The query was using incorrect column names: `latitude`, `longitude` → `lat`, `lon`;"
        " `track_id` → `trackid`"
    ]
    assert statements(other) == ["Renamed the settings keys: `max_conn` → `pool.max_connections`"]


def test_a_check_of_the_moment_with_a_mark_is_still_no_statement():
    assert statements("`cargo test` → ✅ 42 passed") == []


def test_the_problem_and_the_fix_of_one_change_in_one_reply_are_one_fact():
    reply = (
        "Fixed and deployed.\n\n## The Problem\nThe query was using incorrect column names:\n"
        "- ❌ `track_id` → ✅ `trackid`\n\n## The Fix\n"
        "Updated [extreme.go](go/extreme.go) to use the correct column names that match the schema "
        "(verified from the working `query_radiation` tool)."
    )
    edited = tool_run(
        2, "Edit", {"file_path": "/src/go/extreme.go", "old_string": "a", "new_string": "b"}, "ok"
    )
    assert facts_of(one_turn("the extreme readings tool fails with a column error", edited, reply)) == [
        "The query was using incorrect column names: `track_id` → `trackid`; Updated extreme.go to use the"
        " correct column names that match the schema (verified from the working `query_radiation` tool)."
    ]


def test_two_statements_of_one_reply_on_different_subjects_stay_two_facts():
    reply = (
        "Pushed.\n\n- Changed the deploy host from `10.0.0.5` to `10.0.0.7`\n"
        "- The health check now polls `/healthz` every 30s"
    )
    pushed = ran(2, "git commit -am move && git push", "main -> main")
    assert len(facts_of(one_turn("move the deploy and fix the health check", pushed, reply))) == 2


def one_turn(request: str, work: list[EventDoc], reply: str) -> list[EventDoc]:
    """A request, the tool work that answered it, and the agent's closing reply."""
    return [ev(1, Role.USER, request), *work, ev(4, Role.ASSISTANT, reply)]


def test_a_value_the_session_reported_then_edited_out_is_no_fact():
    def edit(seq: int, old: str, new: str) -> list[EventDoc]:
        return tool_run(
            seq, "Edit", {"file_path": "/app/config.ts", "old_string": old, "new_string": new}, "ok"
        )

    events = [
        ev(1, Role.USER, "set the API base"),
        *edit(2, "base = ''", "base = 'https://api.acme.example'"),
        ev(4, Role.ASSISTANT, "Set `base` in `config.ts` to `https://api.acme.example` for every request."),
        ev(5, Role.USER, "no, the CMS serves it"),
        *edit(6, "base = 'https://api.acme.example'", "base = 'https://cms.acme.example'"),
        ev(8, Role.ASSISTANT, "Set `base` in `config.ts` to `https://cms.acme.example` for every request."),
    ]
    assert facts_of(events) == ["Set `base` in `config.ts` to `https://cms.acme.example` for every request."]


@pytest.mark.parametrize(
    "report",
    [
        "Сервер теперь слушает на `api.example.org:8080`, настройка в `config/server.toml`.",  # Russian
        "服务器现在监听 `api.example.org:8080`，配置在 `config/server.toml` 中。",  # Chinese, no spaces
    ],
)
def test_a_closing_report_in_another_script_states_a_fact_as_an_english_one_does(report):
    events = [
        ev(1, Role.USER, "поменяй порт сервера"),
        *tool_run(
            2, "Edit", {"file_path": "/src/config/server.toml", "old_string": "a", "new_string": "b"}, "ok"
        ),
        ev(4, Role.ASSISTANT, report),
    ]
    assert facts_of(events) == [report]

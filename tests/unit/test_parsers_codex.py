"""Codex rollout parsing on hand-built lines: metadata, tools, injected context, compaction, legacy."""

from __future__ import annotations

import json

import pytest
import zstandard
from cairn.transcripts import Role, parse_transcript

from tests.paths import FIXTURES

pytestmark = pytest.mark.unit

SESSION = "019c8a70-dda7-7f33-98ea-f30553347322"
TS = "2026-02-23T12:19:42.561Z"


def line(kind: str, payload: dict) -> dict:
    return {"timestamp": TS, "type": kind, "payload": payload}


def meta() -> dict:
    return line(
        "session_meta",
        {
            "id": SESSION,
            "timestamp": TS,
            "cwd": "/home/dev/shop",
            "originator": "codex_cli_rs",
            "cli_version": "0.104.0",
            "instructions": None,
            "git": {
                "commit_hash": "86b4a8d9581d63089e53845daf7dd787129a9972",
                "branch": "main",
                "repository_url": "git@github.com:acme/shop.git",
            },
        },
    )


def message(role: str, value: str) -> dict:
    block = "output_text" if role == "assistant" else "input_text"
    return line(
        "response_item", {"type": "message", "role": role, "content": [{"type": block, "text": value}]}
    )


def user_event(value: str) -> dict:
    return line("event_msg", {"type": "user_message", "message": value, "images": []})


def to_bytes(lines: list[dict]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in lines).encode()


AGENTS_MD = "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nUse pnpm.\n</INSTRUCTIONS>"
ENV = "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <shell>zsh</shell>\n</environment_context>"


def session_lines() -> list[dict]:
    return [
        meta(),
        message("developer", "<permissions instructions>sandbox rules</permissions instructions>"),
        message("user", AGENTS_MD),
        message("user", ENV),
        line("event_msg", {"type": "task_started", "turn_id": "t1"}),
        message("user", "Why does the checkout test fail?"),
        user_event("Why does the checkout test fail?"),
        line("turn_context", {"turn_id": "t1", "cwd": "/home/dev/shop", "model": "gpt-5.3-codex"}),
        line("event_msg", {"type": "agent_reasoning", "text": "thinking"}),
        line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
        line("event_msg", {"type": "agent_message", "message": "Let me run it."}),
        message("assistant", "Let me run it."),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "pnpm test checkout", "yield_time_ms": 1000}),
                "call_id": "call_1",
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": "Chunk ID: 1\nWall time: 2.1 seconds\nProcess exited with code 1\n"
                "Output:\nExpected 3 items, got 2",
            },
        ),
        line(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_2",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** End Patch",
            },
        ),
        line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_2",
                "output": json.dumps({"output": "Success. Updated files", "metadata": {"exit_code": 0}}),
            },
        ),
        message("assistant", "Fixed: the cart dropped the last item."),
        line("event_msg", {"type": "token_count", "info": None}),
    ]


def test_a_rollout_yields_metadata_and_the_real_conversation_without_injected_context():
    parsed = parse_transcript(to_bytes(session_lines()))

    assert parsed.agent == "codex"
    assert parsed.session_id == SESSION
    assert parsed.cwd == "/home/dev/shop"
    assert parsed.version == "0.104.0"
    assert parsed.git_remote == "git@github.com:acme/shop.git"
    assert parsed.git_branch == "main"
    assert parsed.git_commit == "86b4a8d9581d63089e53845daf7dd787129a9972"
    assert parsed.model == "gpt-5.3-codex"
    assert [e.role for e in parsed.events] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL_CALL,
        Role.TOOL_RESULT,
        Role.TOOL_CALL,
        Role.TOOL_RESULT,
        Role.ASSISTANT,
    ]
    assert parsed.events[0].text == "Why does the checkout test fail?"
    assert all("AGENTS.md" not in e.text and "environment_context" not in e.text for e in parsed.events)
    assert parsed.stats.noise_dropped["system_prompt"] == 1
    assert parsed.stats.noise_dropped["injected_context"] == 2
    assert parsed.stats.noise_dropped["reasoning"] == 1


def test_function_call_arguments_are_parsed_and_a_nonzero_exit_marks_the_result_as_an_error():
    parsed = parse_transcript(to_bytes(session_lines()))

    calls = parsed.by_role(Role.TOOL_CALL)
    results = parsed.by_role(Role.TOOL_RESULT)
    assert calls[0].tool_name == "exec_command"
    assert calls[0].tool_input == {"cmd": "pnpm test checkout", "yield_time_ms": 1000}
    assert calls[1].tool_name == "apply_patch" and calls[1].tool_input == "*** Begin Patch\n*** End Patch"
    assert results[0].tool_call_id == "call_1" and results[0].is_error
    assert results[1].text == "Success. Updated files" and not results[1].is_error


def test_ui_event_messages_are_counted_as_ignored_not_unknown():
    parsed = parse_transcript(to_bytes(session_lines()))

    assert parsed.stats.skipped_unknown == {}
    assert parsed.stats.ignored["event_msg:agent_message"] == 1
    assert parsed.stats.ignored["event_msg:token_count"] == 1
    assert parsed.stats.parsed == parsed.stats.lines


def test_without_user_message_events_injected_context_is_recognised_by_its_content():
    lines = [item for item in session_lines() if item["payload"].get("type") != "user_message"]

    parsed = parse_transcript(to_bytes(lines))

    assert [e.text for e in parsed.by_role(Role.USER)] == ["Why does the checkout test fail?"]
    assert parsed.stats.noise_dropped["agents_md"] == 1
    assert parsed.stats.noise_dropped["environment_context"] == 1


def test_a_compacted_line_becomes_a_summary_and_its_replacement_history_is_not_replayed():
    lines = session_lines() + [
        line(
            "compacted",
            {
                "message": "Checkout fix done; next: refunds.",
                "replacement_history": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "old prompt"}],
                    }
                ],
            },
        ),
        line("event_msg", {"type": "context_compacted"}),
    ]

    parsed = parse_transcript(to_bytes(lines))

    assert parsed.events[-1].role is Role.SUMMARY
    assert parsed.events[-1].text == "Checkout fix done; next: refunds."
    assert all(e.text != "old prompt" for e in parsed.events)


def test_error_events_are_kept_as_system_errors():
    lines = session_lines() + [line("event_msg", {"type": "error", "message": "stream disconnected"})]

    parsed = parse_transcript(to_bytes(lines))

    assert parsed.events[-1].role is Role.SYSTEM and parsed.events[-1].is_error
    assert parsed.events[-1].text == "stream disconnected"


def test_a_zstd_compressed_rollout_parses_like_the_plain_one():
    plain = to_bytes(session_lines())

    compressed = parse_transcript(zstandard.ZstdCompressor().compress(plain), filename="rollout-x.jsonl.zst")

    assert compressed.events == parse_transcript(plain).events


def test_a_legacy_rollout_without_the_type_payload_wrapper_is_read():
    legacy = [
        {
            "id": SESSION,
            "timestamp": TS,
            "instructions": None,
            "git": {"commit_hash": "abc", "branch": "main", "repository_url": "https://github.com/acme/shop"},
        },
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Add a README"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["ls"]}),
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "src\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}),
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "README added."}],
        },
    ]

    parsed = parse_transcript(to_bytes(legacy))

    assert parsed.agent == "codex"
    assert parsed.session_id == SESSION
    assert parsed.git_remote == "https://github.com/acme/shop"
    assert [e.role for e in parsed.events] == [Role.USER, Role.TOOL_CALL, Role.TOOL_RESULT, Role.ASSISTANT]
    assert parsed.events[1].tool_input == {"command": ["ls"]}
    assert parsed.events[2].text == "src\n"


def test_unknown_rollout_line_and_item_types_are_counted_not_fatal():
    lines = session_lines() + [
        line("hologram", {"x": 1}),
        line("response_item", {"type": "teleport", "call_id": "z"}),
    ]

    parsed = parse_transcript(to_bytes(lines))

    assert parsed.stats.skipped_unknown == {"hologram": 1, "response_item:teleport": 1}
    assert len(parsed.events) == 7


# --- worker threads: a rollout whose session_meta says it was spawned by another thread -----------------
ROLLOUTS = FIXTURES / "agent_stores" / "home" / ".codex" / "sessions" / "2026" / "06" / "25"
PARENT = ROLLOUTS / "rollout-2026-06-25T02-07-10-019efc87-fa98-7971-91df-0c9512a065da.jsonl"
WORKER = ROLLOUTS / "rollout-2026-06-25T02-09-41-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"


def test_a_worker_thread_sent_after_its_parent_is_read_as_sub_agent_work():
    parent, worker = PARENT.read_bytes(), WORKER.read_bytes()
    alone = parse_transcript(parent, "codex", PARENT.name)
    # the parts joined as the pipeline joins them (pipeline/reading/parts.py)
    both = parse_transcript(parent + worker, "codex", WORKER.name)
    worker_from = parent.count(b"\n") + 1
    main = [e for e in both.events if e.line_no < worker_from]
    side = [e for e in both.events if e.line_no >= worker_from]
    assert both.session_id == alone.session_id == "019efc87-fa98-7971-91df-0c9512a065da"
    assert [(e.role, e.text) for e in main] == [(e.role, e.text) for e in alone.events]
    assert not any(e.is_sidechain for e in main)
    assert side and all(e.is_sidechain for e in side)
    # its task prompt is the parent agent's, not the person's
    assert Role.USER in {e.role for e in side} and Role.TOOL_CALL in {e.role for e in side}


def test_a_worker_thread_learned_on_its_own_is_a_session_like_any_other():
    parsed = parse_transcript(WORKER.read_bytes(), "codex", WORKER.name)
    assert parsed.session_id == "019c8a70-dda7-7f33-98ea-f30553347322"
    assert parsed.events and not any(e.is_sidechain for e in parsed.events)


def test_after_a_worker_thread_a_further_part_of_the_session_itself_is_the_main_thread_again():
    spawned = {"subagent": {"thread_spawn": {"parent_thread_id": SESSION, "depth": 1}}}
    worker_meta = line("session_meta", {**meta()["payload"], "id": "019c8a70-0000-7000-8000-0000000000aa"})
    worker_meta["payload"]["source"] = spawned
    worker = [
        worker_meta,
        meta(),  # a forked thread repeats its ancestor's session_meta in its header: still the worker's
        message("user", "Find where the cart drops items"),
        user_event("Find where the cart drops items"),
        message("assistant", "cart.ts slices one short."),
    ]
    later = [meta(), message("user", "Ship it"), user_event("Ship it"), message("assistant", "Shipped.")]
    parsed = parse_transcript(to_bytes(session_lines() + worker + later), "codex", "rollout.jsonl")
    side = {e.text: e.is_sidechain for e in parsed.events if e.role in (Role.USER, Role.ASSISTANT)}
    assert side == {
        "Why does the checkout test fail?": False,
        "Let me run it.": False,
        "Fixed: the cart dropped the last item.": False,
        "Find where the cart drops items": True,
        "cart.ts slices one short.": True,
        "Ship it": False,
        "Shipped.": False,
    }


# As Codex's app sends a prompt with attachments (captured from a session-bridge rollout, paths shortened)
ATTACHED = (
    "\n# Files mentioned by the user:\n\n## Screenshot 2026-04-10 at 14.36.42.png: "
    "/Users/dev/Documents/Screenshots/Screenshot 2026-04-10 at 14.36.42.png\n\n## My request for Codex:\n"
    "Fix session details header text format. Should take up the space to the right \n"
)
IDE = (
    "# Context from my IDE setup:\n\n## Open tabs:\n- launch.json: .vscode/launch.json\n\n"
    "## My request for Codex:\n"
)


def test_what_the_person_typed_is_read_after_the_context_the_app_attached():
    parsed = parse_transcript(
        to_bytes(
            [meta(), message("user", ATTACHED), user_event(ATTACHED)]
            + [message("user", IDE + "Run the tests"), user_event("Run the tests")]
        )
    )
    users = [e.text for e in parsed.events if e.role is Role.USER]
    assert users == [
        "Fix session details header text format. Should take up the space to the right",
        "Run the tests",
    ]


def test_a_message_of_attachments_alone_keeps_its_text():
    only = "# Files mentioned by the user:\n\n## shot.png: /tmp/shot.png\n\n## My request for Codex:\n"
    parsed = parse_transcript(to_bytes([meta(), message("user", only), user_event(only)]))
    assert [e.text for e in parsed.events if e.role is Role.USER] == [only]


def test_a_plan_the_person_approved_in_plan_mode_is_marked_as_the_agents_plan():
    plan = "PLEASE IMPLEMENT THIS PLAN:\n# Sync\n\n## Steps\n- add the remote\n\n## Tests\n- pnpm test"
    parsed = parse_transcript(
        to_bytes([meta(), message("user", plan), user_event(plan), message("user", "go"), user_event("go")])
    )
    users = [(e.text.split("\n")[0], e.is_plan) for e in parsed.events if e.role is Role.USER]
    assert users == [("PLEASE IMPLEMENT THIS PLAN:", True), ("go", False)]

"""Claude Code JSONL parsing on hand-built lines: threading, streaming, sidechains, summaries, noise."""

from __future__ import annotations

import json
from itertools import count

import pytest
from cairn.transcripts import Role, parse_transcript

pytestmark = pytest.mark.unit

SESSION = "11111111-2222-4333-8444-555555555555"


class Session:
    """Builds Claude Code lines the way the client writes them: each line's parent is the previous one."""

    def __init__(self, version: str = "2.0.28") -> None:
        self.lines: list[dict] = []
        self.version = version
        self._ids = count(1)
        self.last: str | None = None

    def _line(self, kind: str, message: dict, *, parent: str | None = "<last>", **extra) -> str:
        uuid = f"u-{next(self._ids):04d}"
        self.lines.append(
            {
                "parentUuid": self.last if parent == "<last>" else parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/home/dev/shop",
                "sessionId": SESSION,
                "version": self.version,
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": "2025-10-01T10:00:00.000Z",
                **extra,
            }
        )
        self.last = uuid
        return uuid

    def user(self, content, **extra) -> str:
        return self._line("user", {"role": "user", "content": content}, **extra)

    def assistant(self, message_id: str, *blocks: dict, **extra) -> str:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": list(blocks),
        }
        return self._line("assistant", message, **extra)

    def result(self, call_id: str, content, is_error: bool = False, **extra) -> str:
        block = {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}
        return self.user([block], **extra)

    def raw(self, obj: dict) -> None:
        self.lines.append(obj)

    def bytes(self) -> bytes:
        return "".join(json.dumps(line) + "\n" for line in self.lines).encode()


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, **tool_input) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def parse(session: Session):
    return parse_transcript(session.bytes())


def test_a_plain_session_becomes_user_assistant_tool_call_and_result_events_in_order():
    s = Session()
    s.user("Run the tests with pytest -x please")
    s.assistant("msg_1", text("Running them now."))
    s.assistant("msg_1", tool_use("toolu_1", "Bash", command="pytest -x"))
    s.result("toolu_1", "3 passed")
    s.assistant("msg_2", text("All 3 tests pass."))

    parsed = parse(s)

    assert parsed.agent == "claude-code"
    assert parsed.session_id == SESSION
    assert parsed.cwd == "/home/dev/shop"
    assert parsed.git_branch == "main"
    assert parsed.version == "2.0.28"
    assert [e.role for e in parsed.events] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL_CALL,
        Role.TOOL_RESULT,
        Role.ASSISTANT,
    ]
    call, result = parsed.events[2], parsed.events[3]
    assert call.tool_name == "Bash" and call.tool_input == {"command": "pytest -x"}
    assert result.tool_call_id == call.tool_call_id == "toolu_1"
    assert result.text == "3 passed"
    assert [e.seq for e in parsed.events] == [0, 1, 2, 3, 4]
    assert [e.line_no for e in parsed.events] == [1, 2, 3, 4, 5]


def test_streamed_lines_of_one_message_merge_into_one_assistant_event_and_repeats_are_dropped():
    s = Session()
    s.user("Explain the cache")
    s.assistant("msg_1", text("The cache is"))
    s.assistant("msg_1", text("The cache is keyed by tenant."))  # a longer copy of the same block
    s.assistant("msg_1", text("The cache is keyed by tenant."))  # an exact repeat
    s.assistant("msg_1", text("Entries expire after 10 minutes."))

    parsed = parse(s)

    assistant = parsed.by_role(Role.ASSISTANT)
    assert len(assistant) == 1
    assert assistant[0].text == "The cache is keyed by tenant.\n\nEntries expire after 10 minutes."
    assert (assistant[0].line_no, assistant[0].last_line) == (2, 5)
    assert parsed.stats.streamed_merged == 3
    assert parsed.stats.noise_dropped["streamed_duplicate"] == 1


def test_a_tool_use_block_written_twice_is_kept_once():
    s = Session()
    s.user("list files")
    s.assistant("msg_1", tool_use("toolu_1", "Bash", command="ls"))
    s.assistant("msg_1", tool_use("toolu_1", "Bash", command="ls"))
    s.result("toolu_1", "a.py")

    assert len(parse(s).by_role(Role.TOOL_CALL)) == 1


def test_thinking_is_kept_as_low_trust_reasoning_and_redacted_thinking_is_dropped():
    s = Session()
    s.user("why is it slow?")
    s.assistant(
        "msg_1", {"type": "thinking", "thinking": "Let me consider the N+1 query...", "signature": "x"}
    )
    s.assistant("msg_1", {"type": "redacted_thinking", "data": "opaque"})
    s.assistant("msg_1", text("There is an N+1 query in the order list."))

    parsed = parse(s)

    thoughts = [e for e in parsed.events if e.role is Role.THINKING]
    assert [e.text for e in thoughts] == ["Let me consider the N+1 query..."]
    assert parsed.stats.noise_dropped["thinking"] == 1  # the redacted one


def test_a_branch_abandoned_by_a_rewind_is_dropped_but_the_live_branch_is_kept():
    s = Session()
    s.user("Add a health endpoint")
    fork = s.assistant("msg_1", text("Which framework?"))
    s.user("Use Flask")  # later rewound
    s.assistant("msg_2", text("Flask route added."))
    s.last = fork
    s.user("Use FastAPI")
    s.assistant("msg_3", text("FastAPI route added."))

    parsed = parse(s)

    texts = [e.text for e in parsed.events]
    assert "Use FastAPI" in texts and "FastAPI route added." in texts
    assert "Use Flask" not in texts and "Flask route added." not in texts
    assert parsed.stats.off_branch_dropped == 2


def test_parallel_tool_results_that_fork_the_chain_are_all_kept():
    # Claude Code parents a parallel tool's result on the tool_use line, not the previous line
    s = Session()
    s.user("Write both files")
    first = s.assistant("msg_1", tool_use("toolu_a", "Write", file_path="a.md", content="A"))
    second = s.assistant("msg_1", tool_use("toolu_b", "Write", file_path="b.md", content="B"))
    s.result("toolu_a", "File created successfully at: a.md", parent=first)
    s.result("toolu_b", "File created successfully at: b.md", parent=second)
    s.assistant("msg_2", text("Created both files."))

    parsed = parse(s)

    assert {e.tool_call_id for e in parsed.by_role(Role.TOOL_RESULT)} == {"toolu_a", "toolu_b"}
    assert parsed.stats.off_branch_dropped == 0


def test_a_compaction_boundary_keeps_the_conversation_before_it_and_its_summary_becomes_a_summary_event():
    s = Session()
    s.user("Migrate the billing tables")
    s.assistant("msg_1", text("Migration written."))
    before = s.last
    s.raw(
        {
            "parentUuid": None,
            "logicalParentUuid": before,
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "uuid": "u-boundary",
            "sessionId": SESSION,
            "timestamp": "2025-10-01T11:00:00.000Z",
            "compactMetadata": {"trigger": "auto", "preTokens": 155000},
        }
    )
    s.last = "u-boundary"
    s.user(
        "This session is being continued from a previous conversation. Summary: billing migrated.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    s.user("Now add the rollback")

    parsed = parse(s)

    roles = [e.role for e in parsed.events]
    assert roles == [Role.USER, Role.ASSISTANT, Role.SYSTEM, Role.SUMMARY, Role.USER]
    assert parsed.by_role(Role.SUMMARY)[0].text.endswith("billing migrated.")
    assert parsed.stats.off_branch_dropped == 0


def test_a_compaction_summary_is_kept_without_the_harness_s_closing_words_to_the_model():
    s = Session()
    s.user("Migrate the billing tables")
    s.user(
        "This session is being continued from a previous conversation. Summary: billing migrated.\n\n"
        "If you need specific details from before compaction, read the full transcript at: /x.jsonl\n"
        "Continue the conversation from where it left off without asking the user any further questions.",
        isCompactSummary=True,
    )

    [summary] = parse(s).by_role(Role.SUMMARY)

    assert summary.text.endswith("billing migrated.")


def test_a_summary_line_for_this_session_is_kept_and_one_for_another_session_is_dropped():
    s = Session()
    s.user("Fix the login bug")
    leaf = s.assistant("msg_1", text("Fixed."))
    s.raw({"type": "summary", "summary": "Login bug fixed", "leafUuid": leaf})
    s.raw({"type": "summary", "summary": "Some other session", "leafUuid": "not-in-this-file"})

    parsed = parse(s)

    assert [e.text for e in parsed.by_role(Role.SUMMARY)] == ["Login bug fixed"]
    assert parsed.stats.noise_dropped["foreign_summary"] == 1


def test_sidechain_turns_are_flagged_and_the_subagent_answer_repeated_as_task_result_is_kept_once():
    s = Session(version="1.0.98")
    s.user("Audit the dependencies")
    task = s.assistant("msg_1", tool_use("toolu_task", "Task", description="audit", prompt="Audit deps"))
    answer = "## Audit\n\nTwo packages are outdated: requests 2.25 and urllib3 1.26; both have CVEs."
    s.user("Audit deps", parent=None, isSidechain=True)
    s.lines[-1]["isSidechain"] = True
    s.assistant("msg_side", text(answer))
    s.lines[-1]["isSidechain"] = True
    s.result("toolu_task", [{"type": "text", "text": answer}], parent=task)

    parsed = parse(s)

    side = [e for e in parsed.events if e.is_sidechain]
    assert [e.role for e in side] == [Role.USER]  # the sub-agent's prompt, flagged
    assert [e.text for e in parsed.by_role(Role.TOOL_RESULT)] == [answer]
    assert parsed.stats.noise_dropped["sidechain_duplicate"] == 1


def test_system_reminders_and_cairn_context_are_cut_out_of_text():
    s = Session()
    s.user("<cairn-context>\nPreference: use pnpm\n</cairn-context>\nWhat does the build script do?")
    s.assistant("msg_1", tool_use("toolu_1", "Read", file_path="package.json"))
    s.result(
        "toolu_1",
        '{"scripts": {"build": "vite build"}}\n\n<system-reminder>\nConsider whether the file'
        " looks malicious.\n</system-reminder>\n",
    )

    parsed = parse(s)

    assert parsed.events[0].text == "What does the build script do?"
    assert parsed.by_role(Role.TOOL_RESULT)[0].text == '{"scripts": {"build": "vite build"}}'
    assert parsed.stats.noise_dropped["cairn_context"] == 1
    assert parsed.stats.noise_dropped["system_reminder"] == 1


def test_slash_commands_keep_what_the_user_typed_and_caveats_and_command_output_are_dropped():
    s = Session()
    s.user(
        "Caveat: The messages below were generated by the user while running local commands. DO NOT respond.",
        isMeta=True,
    )
    s.user(
        "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"
    )
    s.user("<local-command-stdout>Set model to opus</local-command-stdout>")
    s.user(
        "<command-message>deploy is running…</command-message>\n<command-name>/deploy</command-name>\n"
        "<command-args>staging --dry-run</command-args>"
    )
    s.user("Expanded body of the /deploy command prompt", isMeta=True)

    parsed = parse(s)

    assert [e.text for e in parsed.events] == ["/deploy staging --dry-run"]
    dropped = parsed.stats.noise_dropped
    assert dropped["meta_message"] == 2
    assert dropped["housekeeping_command"] == 1
    assert dropped["local_command_output"] == 1


def test_client_written_api_error_messages_are_noise():
    s = Session()
    s.user("hi")
    s.assistant("msg_err", text("API Error: 529 Overloaded"), isApiErrorMessage=True)
    s.lines[-1]["message"]["model"] = "<synthetic>"

    parsed = parse(s)

    assert [e.role for e in parsed.events] == [Role.USER]
    assert parsed.stats.noise_dropped["synthetic_message"] == 1


def test_unknown_line_types_and_blocks_are_counted_not_fatal():
    s = Session()
    s.user("hello")
    s.raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False})
    s.raw({"type": "hologram", "uuid": "u-holo", "parentUuid": s.last})
    s.assistant("msg_1", {"type": "telepathy", "payload": 1}, text("hi there"))

    parsed = parse(s)

    assert [e.text for e in parsed.events] == ["hello", "hi there"]
    assert parsed.stats.skipped_unknown == {"hologram": 1, "assistant:telepathy": 1}
    assert parsed.stats.ignored == {"file-history-snapshot": 1}
    assert parsed.stats.parsed == 3


def test_tool_result_errors_and_image_blocks_are_carried_over():
    s = Session()
    s.user(
        [text("What is on this screenshot?"), {"type": "image", "source": {"type": "base64", "data": "AAA"}}]
    )
    s.assistant("msg_1", tool_use("toolu_1", "Edit", file_path="a.py", old_string="x", new_string="y"))
    s.result("toolu_1", "<tool_use_error>File has not been read yet.</tool_use_error>", is_error=True)

    parsed = parse(s)

    assert parsed.events[0].text == "What is on this screenshot?"
    assert parsed.by_role(Role.TOOL_RESULT)[0].is_error
    assert parsed.stats.ignored == {"user:image": 1}

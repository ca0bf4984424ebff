"""What the person typed while Claude Code was busy (`queue-operation` records), and slash command arguments.

The samples are real sessions trimmed to the lines that matter (fixtures/transcripts/claude-code/fittoday, see
its SOURCE.md); the context-evaluator session is a whole real one.
"""

from __future__ import annotations

import json

import pytest
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.steps import build_excerpts
from cairn.pipeline.reading.turns import is_request
from cairn.transcripts import Role, parse_transcript

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

FITTODAY = TRANSCRIPTS / "claude-code" / "fittoday"
QUEUED = FITTODAY / "70442f59-queued-messages.jsonl"
SLASH = FITTODAY / "3614e41d-queued-slash-command.jsonl"
CONTEXT_EVALUATOR = TRANSCRIPTS / "claude-code" / "context-evaluator" / "session-8ecab05f.jsonl"


def _requests(path):
    parsed = parse_transcript(path.read_bytes(), filename=path.name)
    return parsed, [(e.line_no, e.text) for e in parsed.events if e.role is Role.USER and not e.is_sidechain]


def test_a_message_the_agent_took_in_mid_turn_is_the_persons_request_at_the_place_it_was_typed():
    parsed, requests = _requests(QUEUED)

    # line 3 exists only as a queue record (enqueue, then remove): it was never written as a user line
    assert requests == [
        (3, "realize o commit após o build estar correto nessa mesma branch"),
        (11, "e push nessa branch"),
    ]
    mid_turn = parsed.by_role(Role.USER)[0]
    assert mid_turn.timestamp == "2026-03-13T21:15:38.143Z" and not mid_turn.is_sidechain
    # it sits before the agent's answer to it, between the build it interrupted and that build's result
    assert [e.line_no for e in parsed.events].index(3) < [e.line_no for e in parsed.events].index(6)


def test_a_queued_message_later_delivered_as_a_user_line_is_kept_once_there():
    parsed, requests = _requests(QUEUED)

    assert [text for _, text in requests].count("e push nessa branch") == 1
    assert parsed.stats.noise_dropped["queued_delivered"] == 1


def test_what_the_harness_queues_is_never_taken_for_the_persons_words():
    parsed, requests = _requests(QUEUED)

    assert not any("task-notification" in text for _, text in requests)
    # the notification's own delivery (line 16) stays a note, as it was before queues were read
    assert [e.line_no for e in parsed.by_role(Role.SYSTEM)] == [16]

    parsed, requests = _requests(CONTEXT_EVALUATOR)
    assert not any(text.lstrip().startswith("{") for _, text in requests)  # background-task records
    assert (438, 'and "Linked" should appear as "Linked docs"') in requests  # enqueued, then removed


def test_a_queued_slash_command_is_one_request_holding_its_arguments():
    parsed, requests = _requests(SLASH)

    # typed as "/swift-code-reviewer …" while busy, delivered as the command the prompt box completed
    assert requests == [
        (5, "/swift-code-reviewer-skill por todo o meu PR e modificações que foi feito agora")
    ]
    assert parsed.stats.noise_dropped == {"queued_delivered": 1, "command_wrapper": 1}


def test_slash_command_arguments_reach_the_pipeline_as_the_request_of_the_step():
    parsed = parse_transcript(SLASH.read_bytes())
    events = [EventDoc.of(e) for e in parsed.events]

    command = next(e for e in events if e.line_no == 5)
    assert is_request(command)
    [step] = [x for x in build_excerpts(events) if x.line_start == 5]
    assert step.request == "/swift-code-reviewer-skill por todo o meu PR e modificações que foi feito agora"
    assert step.text.startswith("user: /swift-code-reviewer-skill por todo o meu PR")


def _queue_session(*records: dict) -> bytes:
    base = {"sessionId": "s1", "cwd": "/w", "version": "2.1.75", "isSidechain": False}
    return "".join(json.dumps({**base, **r}) + "\n" for r in records).encode()


def _prompt(uuid: str, parent: str | None, text: str) -> dict:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "message": {"role": "user", "content": text}}


def _enqueue(text: str) -> dict:
    return {"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "content": text}


def test_the_same_words_queued_twice_are_two_requests_when_only_one_was_delivered():
    answer = {"role": "assistant", "id": "m1", "model": "claude-opus-4-6", "content": "Retrying."}
    data = _queue_session(
        _prompt("u1", None, "run the tests"),
        _enqueue("try again"),
        {"type": "queue-operation", "operation": "remove"},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": answer},
        _enqueue("try again"),
        {"type": "queue-operation", "operation": "dequeue"},
        _prompt("u2", "a1", "try again"),
    )

    parsed = parse_transcript(data, "claude-code")

    assert [(e.line_no, e.text) for e in parsed.by_role(Role.USER)] == [
        (1, "run the tests"),
        (2, "try again"),  # taken in mid-turn
        (7, "try again"),  # the second one, delivered as its own line
    ]


def test_a_queued_housekeeping_command_asks_nothing():
    data = _queue_session(
        _prompt("u1", None, "run the tests"),
        _enqueue("/clear"),
        {"type": "queue-operation", "operation": "remove"},
    )

    parsed = parse_transcript(data, "claude-code")

    assert [e.text for e in parsed.by_role(Role.USER)] == ["run the tests"]
    assert parsed.stats.ignored == {"queue-operation": 2}

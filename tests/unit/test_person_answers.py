"""What the person chose when the agent put a question to them is a decision of theirs.

The sample is a real Claude Code session trimmed to the lines that matter
(fixtures/transcripts/claude-code/fittoday, see its SOURCE.md): two `AskUserQuestion` calls and the answers
the harness wrote into their results.
"""

from __future__ import annotations

import pytest
from cairn.domain.models import MemoryKind
from cairn.pipeline.learning.person import answers
from cairn.pipeline.models import EventDoc
from cairn.transcripts import Role, parse_transcript

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

ASKED = TRANSCRIPTS / "claude-code" / "fittoday" / "3614e41d-asked-the-person.jsonl"


def _events(raw: bytes) -> list[EventDoc]:
    return [EventDoc.of(e) for e in parse_transcript(raw, filename="session.jsonl").events]


def test_each_answered_question_is_the_persons_decision_with_the_question_it_answers():
    found = answers(_events(ASKED.read_bytes()))
    assert [c.content for c in found] == [
        "Como prefere abordar a tradução das descrições vindas da API WGER? → "
        "Apple Translation API (iOS 17.4+)",
        "Como o CMS identifica os usuários (alunos e trainers)? Usa o Firebase UID do app, ou tem sistema de "
        "usuários próprio? → Firebase UID",
        "Onde os treinos do personal (vindos do CMS) devem aparecer no app? → "
        "No segmento 'Personal' existente",
    ]
    assert {c.kind for c in found} == {MemoryKind.DECISION}
    # the person's words: the provenance reads them as theirs, cited at the result's line
    assert {c.details["source"] for c in found} == {"user"}
    assert [c.line_start for c in found] == [2, 4, 4]


def test_a_question_the_person_rejected_or_set_aside_decides_nothing():
    events = _events(ASKED.read_bytes())
    rejected = [e.model_copy(update={"is_error": True}) if e.role is Role.TOOL_RESULT else e for e in events]
    assert answers(rejected) == []
    clarify = [
        e.model_copy(update={"text": "The user wants to clarify these questions."})
        if e.role is Role.TOOL_RESULT
        else e
        for e in events
    ]
    assert answers(clarify) == []


def test_a_sub_agents_question_and_its_answer_are_not_the_persons():
    events = [e.model_copy(update={"is_sidechain": True}) for e in _events(ASKED.read_bytes())]
    assert answers(events) == []


WHERE = "Onde os treinos do personal (vindos do CMS) devem aparecer no app?"
WHO = (
    "Como o CMS identifica os usuários (alunos e trainers)? Usa o Firebase UID do app, ou tem sistema de "
    "usuários próprio?"
)


def test_a_quote_inside_an_answer_does_not_shift_the_pairs():
    events = _events(ASKED.read_bytes())
    text = (
        f'User has answered your questions: "{WHERE}"="Na aba "Personal", como hoje", '
        f'"{WHO}"="Firebase UID". '
        "You can now continue with the user's answers in mind."
    )
    quoted = [
        e.model_copy(update={"text": text}) if e.role is Role.TOOL_RESULT and e.line_no == 4 else e
        for e in events
    ]
    chosen = [c.details["answer"] for c in answers(quoted)]
    assert chosen[1:] == ["Firebase UID", 'Na aba "Personal", como hoje']


def _answering(events: list[EventDoc], answer: str) -> list[EventDoc]:
    text = (
        f'User has answered your questions: "{WHERE}"="{answer}", "{WHO}"="Firebase UID". '
        "You can now continue with the user's answers in mind."
    )
    return [
        e.model_copy(update={"text": text}) if e.role is Role.TOOL_RESULT and e.line_no == 4 else e
        for e in events
    ]


def test_an_answer_the_person_typed_states_their_rule_as_their_message_would():
    typed = "Na aba Personal. Nunca mostre treinos de outro personal ao aluno"

    found = answers(_answering(_events(ASKED.read_bytes()), typed))

    assert [c.content for c in found if c.kind is MemoryKind.PREFERENCE] == [
        "Nunca mostre treinos de outro personal ao aluno"
    ]
    chosen = [c.details["answer"] for c in found if c.kind is MemoryKind.DECISION]
    assert chosen[1:] == ["Firebase UID", typed]


def test_an_answer_typed_at_length_is_no_single_choice_but_its_rule_is_kept():
    long = "Na aba Personal, " + "com os treinos do CMS por data e status, " * 7 + "nunca misturados."

    found = answers(_answering(_events(ASKED.read_bytes()), long))

    assert [c.kind for c in found if "nunca misturados" in c.content.lower()] == [MemoryKind.PREFERENCE]
    assert [c.details["answer"] for c in found if c.kind is MemoryKind.DECISION][1:] == ["Firebase UID"]

"""The block of a project of many sessions says each thing once (services.project_block, the handoff's
reported outcomes of pipeline.remembering.reflection)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from cairn.domain.models import Memory, MemoryKind, Provenance
from cairn.domain.vocabulary import Tag
from cairn.pipeline.reading.edited_values import taken_out_after
from cairn.pipeline.reading.session import read_events
from cairn.pipeline.remembering.reflection import reported
from cairn.services.context.decisions import decision_lines
from cairn.services.context.lines import UNRANKED
from cairn.services.project_block import kept_commands, restated_by_rule, said_before, side_sessions
from cairn.transcripts.model import Role

from tests.unit.session_events import tool_run
from tests.unit.test_reported_facts import ev

pytestmark = pytest.mark.unit


def checks(session: str, minute: int, *commands: str) -> Memory:
    lines = "\n".join(f"- build: `{c}`" for c in commands)
    return Memory(
        id=f"mem_{session}_{minute}",
        team_id="t",
        kind=MemoryKind.PROCEDURE,
        content=f"Checks run and passing in this project:\n{lines}",
        tags=("checks", "command"),
        provenance=Provenance(session_id=session),
        created_at=datetime(2026, 1, 1, 0, minute, tzinfo=UTC),
    )


def memory(kind: MemoryKind, content: str, n: int = 1) -> Memory:
    return Memory(
        id=f"mem_{kind.value}_{n}",
        team_id="t",
        kind=kind,
        content=content,
        provenance=Provenance(session_id=f"s{n}"),
        created_at=datetime(2026, 1, 1, 0, n, tzinfo=UTC),
    )


def test_a_check_run_louder_in_one_session_is_the_same_check_counted_once():
    # Go: `-v` only shows more; Rust: `--release` with `cargo test` in another session
    found = kept_commands(
        [
            checks("s1", 1, "go build ./cmd/api/", "cargo test --release"),
            checks("s2", 2, "go build -v ./cmd/api/", "cargo test"),
            checks("s3", 3, "go build ./cmd/api/", "GOOS=linux go build -o api ./cmd/api/"),
        ]
    )

    assert [(k.command, len(k.sessions)) for k in found] == [
        ("go build ./cmd/api/", 3),
        ("cargo test --release", 2),
        ("GOOS=linux go build -o api ./cmd/api/", 1),
    ]


def test_a_check_with_its_action_and_switches_in_another_order_is_the_same_check():
    found = kept_commands(
        [
            checks("s1", 1, "xcodebuild -project App.xcodeproj -scheme App -quiet build"),
            checks("s2", 2, "xcodebuild build -project App.xcodeproj -scheme App -quiet"),
            checks("s3", 3, "xcodebuild build -project App/App.xcodeproj -scheme App -quiet"),
        ]
    )

    assert [len(k.sessions) for k in found] == [2, 1]
    assert found[1].command == "xcodebuild build -project App/App.xcodeproj -scheme App -quiet"


def test_requests_to_another_machine_stay_apart_whatever_their_switches():
    found = kept_commands(
        [
            checks("s1", 1, "mix test", "curl -s https://app.example.org/health"),
            checks("s2", 2, "mix test", "curl -X POST -d x https://app.example.org/health"),
        ]
    )

    # each request ran once, in one session: a look at a server, not a check of the project's code
    assert [(k.command, len(k.sessions)) for k in found] == [("mix test", 2)]


def test_a_value_a_longer_shown_value_starts_with_is_said_already():
    shown = {"https://maps.example.org/?lat=lat&lon=lon&zoom=15", "10.0.0.7"}

    assert said_before({"https://maps.example.org/?lat="}, shown)
    assert said_before({"10.0.0.7"}, shown)
    assert not said_before({"https://maps.example.org/?lat=", "api.example.org"}, shown)
    assert not said_before(set(), shown)


def test_a_persons_rule_the_agent_stated_in_full_is_said_once():
    asked = memory(
        MemoryKind.PREFERENCE,
        "The links to tracks should always go to maps.example.org not api.example.org.",
    )
    rule = memory(
        MemoryKind.FACT,
        "When linking to track data, ALWAYS use `https://maps.example.org` — NEVER use `api.example.org`.",
        2,
    )
    # an Elixir project driven by Codex: the same two names, said as no rule, restate nothing
    remark = memory(MemoryKind.FACT, "Moved the docs from `hexdocs.pm` to `docs.example.org`", 3)
    one_name = memory(MemoryKind.PREFERENCE, "Always deploy to docs.example.org first.", 4)

    assert restated_by_rule(asked, [remark, rule])
    assert not restated_by_rule(asked, [remark])
    assert not restated_by_rule(one_name, [rule, memory(MemoryKind.FACT, "Never skip docs.example.org", 5)])


def test_a_reply_that_leads_in_to_a_code_block_reports_the_sentence_after_it():
    # Claude Code: "…now returns structured data:" then a JSON block, then what the change does
    reply = (
        "Pushed. The key change — `query_radiation` now returns structured data:\n\n"
        '```json\n{"_next_step": {"call_with": {"min_lat": 34.02}}}\n```\n\n'
        "The bounding box in `_next_step` is computed from the query's coordinates."
    )
    events = [
        ev(1, Role.USER, "make it call the live tool"),
        *tool_run(2, "Edit", {"file_path": "/src/tool.go", "old_string": "a", "new_string": "b"}, "ok"),
        ev(4, Role.ASSISTANT, reply),
    ]

    assert reported(read_events(events).turns) == [
        "The bounding box in `_next_step` is computed from the query's coordinates."
    ]


def git(session: str, n: int, content: str, **details) -> Memory:
    return Memory(
        id=f"mem_git_{n}",
        team_id="t",
        kind=MemoryKind.EPISODE,
        content=content,
        tags=("git",),
        details=details,
        provenance=Provenance(session_id=session),
        created_at=datetime(2026, 1, 1, 0, n, tzinfo=UTC),
    )


def test_work_committed_to_a_branch_the_project_went_on_without_is_a_side_branchs():
    episodes = [
        git("s1", 1, "Git activity of this session: commits on `main`: `a1` feat: api"),
        git("s2", 2, "Git activity of this session: branch `try-ollama`. commits on `try-ollama`: `b2` x"),
        git("s3", 3, "", branches=["main"]),  # details name the branches (newer memories)
    ]
    ages = {"s3": 0, "s2": 1, "s1": 2}

    assert side_sessions(episodes, ages) == {"s2": "try-ollama"}
    # the latest session's own branch is where the project is now, not a side branch
    assert side_sessions(episodes[:2], {"s2": 0, "s1": 1}) == {}
    # a later session that merges or goes on with the branch takes it up
    merged = git("s3", 3, "Git activity of this session: commits on `main`: `c3` Merge branch try-ollama")
    assert side_sessions([*episodes[:2], merged], ages) == {}


def test_sessions_each_on_their_own_branch_have_no_side_branch():
    # a Codex project where every session opens its own pull request branch
    episodes = [git(f"s{n}", n, "", branches=[f"feature/{n}"]) for n in (1, 2, 3)]

    assert side_sessions(episodes, {"s3": 0, "s2": 1, "s1": 2}) == {}


def test_a_branch_put_up_for_review_is_not_left_aside():
    # a pull request merged on the forge's site leaves no trace in the sessions after it
    episodes = [
        git("s1", 1, "", branches=["main"]),
        git(
            "s2",
            2,
            "Git activity of this session: commits on `fix/n-plus-one`: `b2` x. review https://git.example.org/p/pull/7",
        ),
        git("s3", 3, "", branches=["main"]),
    ]

    assert side_sessions(episodes, {"s3": 0, "s2": 1, "s1": 2}) == {}


def test_a_report_of_a_value_the_sessions_later_edit_took_out_is_no_outcome():
    # Claude Code: the agent reports the link as it found it, then the person has it changed
    events = [
        ev(1, Role.USER, "where does the Terms link point?"),
        *tool_run(
            2, "Read", {"file_path": "/app/LegalSection.swift"}, 'Link("Terms", "https://x.app/terms")'
        ),
        ev(
            4,
            Role.ASSISTANT,
            'The "Terms" link in `LegalSection.swift` points to `https://x.app/terms`, a custom page.',
        ),
        ev(5, Role.USER, "point it to Apple's standard EULA"),
        *tool_run(
            6,
            "Edit",
            {
                "file_path": "/app/LegalSection.swift",
                "old_string": '"https://x.app/terms"',
                "new_string": '"https://www.apple.com/legal/internet-services/itunes/dev/stdeula/"',
            },
            "ok",
        ),
        ev(8, Role.ASSISTANT, "`LegalSection.swift` now links the Terms to Apple's standard EULA."),
    ]
    reading = read_events(events)

    assert reported(reading.turns, taken_out_after(reading.events)) == [
        "`LegalSection.swift` now links the Terms to Apple's standard EULA."
    ]


def test_a_rule_restated_in_fewer_of_its_own_words_is_shown_once_in_its_fuller_form():
    from cairn.services.context.conventions import convention_lines

    fuller = memory(MemoryKind.PREFERENCE, "Do not add the full name of the agent as well", 1)
    shorter = memory(MemoryKind.PREFERENCE, "Do not add the full names", 2)
    other = memory(MemoryKind.PREFERENCE, "Add the full names of the reviewers", 3)  # starts otherwise
    shown = [ln.text for ln in convention_lines([fuller, shorter, other], "p", {})]
    assert shown == [
        "- Add the full names of the reviewers\n",
        "- Do not add the full name of the agent as well\n",
    ]


def test_an_older_session_s_bare_git_status_is_no_recent_work_once_a_later_session_ran():
    from cairn.services.context.layout import PROJECT_LIFE
    from cairn.services.context.work import work_lines

    status = "Git activity of this session: at the end, git status: untracked: src/panel.ts"
    episodes = [
        git("s1", 1, status, commits=0, status_only=True),
        git("s1", 2, "Git activity of this session: commits on `main`: `a1` feat: panel", commits=1),
        git("s2", 3, "Git activity of this session: commits on `main`: `b2` release 0.2", commits=1),
    ]
    shown = [ln.memory_id for ln in work_lines(episodes, "p", {}, "s2", PROJECT_LIFE)]
    assert shown == ["mem_git_3", "mem_git_2"]  # s1's commit stays its history; its end state does not
    # the last session's own status is where the checkout is now
    latest = [ln.memory_id for ln in work_lines(episodes[:1], "p", {}, "s1", PROJECT_LIFE)]
    assert latest == ["mem_git_1"]


def test_an_answer_to_the_agents_question_is_shown_for_a_prompt_it_bears_on_and_left_to_recall_otherwise():
    answer = replace(
        memory(MemoryKind.DECISION, "Which execution mode for the RevenueCat feature? → Full Workflow", 2),
        tags=(Tag.ANSWER,),
    )
    chosen = memory(MemoryKind.DECISION, "Use the Apple Translation API instead of local dictionaries", 1)
    unasked = {m.id: UNRANKED for m in (answer, chosen)}

    assert [ln.memory_id for ln in decision_lines([answer, chosen], "p", unasked)] == [chosen.id]
    asked = unasked | {answer.id: (0, 0.0)}
    assert [ln.memory_id for ln in decision_lines([answer, chosen], "p", asked)] == [answer.id, chosen.id]

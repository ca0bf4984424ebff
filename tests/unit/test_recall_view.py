"""What an agent is shown for a recall hit (api.mcp_tools.recall_view): compact, with a way to open more."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from cairn.api.mcp_tools import ANSWER_TOKENS, TOP_SNIPPET_CHARS, memory_view, recall_view, recall_views
from cairn.domain.models import Memory, MemoryKind, Provenance, RecallHit
from cairn.services.tokens import count_tokens

pytestmark = pytest.mark.unit


def hit(**fields) -> RecallHit:
    base = {"id": "mem_1", "team_id": "t", "kind": MemoryKind.PROCEDURE, "project": "p"}
    return RecallHit(memory=Memory(**{**base, **fields}), score=1.0, relevance=0.8)


def test_a_memory_hit_shows_what_an_agent_acts_on_and_its_id_opens_the_rest():
    view = recall_view(
        hit(
            title="Project checks: format, test",
            content="Checks run and passing: format `mise run fmt`; test `mise run test:ci`",
            tags=("checks", "command"),
            details={"steps": ["mise run fmt", "mise run test:ci"], "success_count": 1},
        ),
        "how do I check my change?",
    )
    assert view["id"] == "mem_1" and "mise run test:ci" in view["content"]
    assert view["title"] == "Project checks: format, test" and view["tags"] == ["checks"]
    assert "details" not in view and "project" not in view and view["relevance"] == 0.8


def test_a_hit_is_dated_by_when_its_session_said_it_not_when_cairn_wrote_it():
    said, written = datetime(2026, 3, 2, 17, tzinfo=UTC), datetime(2026, 12, 7, 9, tzinfo=UTC)
    view = recall_view(
        hit(content="Deploys go out on Fridays", valid_from=said, created_at=written), "deploys"
    )
    assert view["said_on"] == "2026-03-02" and "created_at" not in view
    opened = memory_view(hit(content="Deploys go out on Fridays", valid_from=said, created_at=written).memory)
    assert opened["valid_from"].startswith("2026-03-02") and opened["created_at"].startswith("2026-12-07")


def test_a_title_that_only_restates_the_content_is_left_out():
    view = recall_view(
        hit(title="Run the tests: go test ./...", content="Run the tests with `go test ./...`"), "tests"
    )
    assert "title" not in view


def test_excerpts_of_one_step_name_their_request_once():
    def excerpt(n: int, session: str, step: str) -> RecallHit:
        return hit(
            id=f"mem_{n}",
            kind=MemoryKind.EXCERPT,
            title=f"step: {step}",
            content=f"$ make test   # run {n}",
            provenance=Provenance(session_id=session, line_start=n, line_end=n + 1),
        )

    views = recall_views(
        [
            excerpt(1, "s1", "fix the build"),
            excerpt(2, "s1", "fix the build"),
            excerpt(3, "s2", "fix the build"),
        ],
        "make test",
    )
    assert [v.get("title") for v in views] == ["step: fix the build", None, "step: fix the build"]
    # each still cites where it is: its lines, and its session where that changes from the one before
    assert [v.get("session_id") for v in views] == ["s1", None, "s2"]
    assert all(v["lines"] for v in views)


def test_an_excerpt_is_cited_by_its_session_and_lines_not_by_an_id():
    view = recall_view(
        hit(
            kind=MemoryKind.EXCERPT,
            title="step: fix the build",
            content="$ make test → exit 0",
            provenance=Provenance(session_id="s1", line_start=4, line_end=9),
        ),
        "make test",
    )
    assert "id" not in view and view["session_id"] == "s1" and view["lines"] == [4, 9]


def test_a_long_memory_past_the_best_three_is_cut_to_its_lines_on_the_query():
    def content(n: int) -> str:
        steps = "\n".join(
            f"- deploy step {i}: rebuild the widget cache {n} for region {i}" for i in range(30)
        )
        return steps + f"\n- deploy {n} with `make ship`"

    views = recall_views(
        [hit(id=f"mem_{n}", content=content(n)) for n in range(4)], "how do we deploy with make?"
    )
    assert views[3]["truncated"] and "make ship" in views[3]["content"]
    assert len(views[3]["content"]) < len(views[0]["content"])
    # within a tight budget the hit keeps no more than a memory's room
    tight = recall_views(
        [hit(id=f"mem_{n}", content=content(n)) for n in range(4)], "how do we deploy with make?", 700
    )
    assert len(tight[3]["content"]) <= 420


def test_an_answer_with_tokens_to_spare_shows_more_of_its_cut_hits_and_stays_within_budget():
    lines = [f"- the queue worker {i} retries each job three times before parking it" for i in range(40)]
    lines[25] = "- the dead-letter queue is drained by `make drain-dlq` every night"
    found = [hit(id="mem_1", content="\n".join(lines))]
    query = "how is the dead-letter queue drained?"
    alone = recall_view(found[0], query, TOP_SNIPPET_CHARS)
    grown = recall_views(found, query)[0]
    assert "make drain-dlq" in alone["content"] and "make drain-dlq" in grown["content"]
    assert len(alone["content"]) < len(grown["content"]) <= 2 * TOP_SNIPPET_CHARS
    assert count_tokens(json.dumps([grown], ensure_ascii=False)) <= ANSWER_TOKENS


def test_a_line_a_better_hit_showed_is_not_shown_again_by_an_overlapping_excerpt():
    log = [f"$ terraform apply -target=module.queue_{i}   # apply the queue module {i}" for i in range(40)]

    def excerpt(n: int, lines: list[str]) -> RecallHit:
        return hit(
            id=f"mem_{n}",
            kind=MemoryKind.EXCERPT,
            title="step: apply the queue module",
            content="\n".join(lines),
            provenance=Provenance(session_id="s1", line_start=n, line_end=n + len(lines)),
        )

    query = "how was the queue module applied with terraform?"
    # the later excerpt alone would open with lines the better one already shows
    alone = recall_views([excerpt(4, log[4:])], query)[0]["snippet"]
    views = recall_views([excerpt(0, log[:24]), excerpt(4, log[4:])], query)
    first = set(views[0]["snippet"].splitlines())
    second = [ln for ln in views[1]["snippet"].splitlines() if ln != "…"]
    assert first & set(alone.splitlines())
    assert second and not first & set(second)  # only what the better hit did not show


def test_an_answer_of_code_heavy_hits_stays_within_its_token_budget_and_the_best_hit_keeps_its_room():
    def excerpt(n: int) -> RecallHit:
        lines = [
            f'Read {{"file_path": "/home/dev/src/app/module_{n}/config_{k}.toml", "offset": {k * 40}}}'
            for k in range(30)
        ]
        return hit(
            id=f"mem_{n}",
            kind=MemoryKind.EXCERPT,
            content="\n".join(lines),
            provenance=Provenance(session_id=f"s{n}", line_start=n, line_end=n + 1),
        )

    query = "which config file sets the offset?"
    found = [excerpt(n) for n in range(10)]
    roomy = recall_views(found, query, budget_tokens=100_000)
    tight = recall_views(found, query, budget_tokens=2_000)
    assert count_tokens(json.dumps(roomy, ensure_ascii=False)) > 2_000
    assert count_tokens(json.dumps(tight, ensure_ascii=False)) <= 2_000
    # the weakest hits gave up room first: the best hit shows what it showed with room to spare
    assert tight[0]["snippet"] == recall_view(found[0], query, TOP_SNIPPET_CHARS)["snippet"]
    assert len(tight[-1]["snippet"]) < len(roomy[-1]["snippet"])
    assert len(tight) == 10  # every hit is still cited


def test_a_memory_learned_after_its_session_moved_to_another_branch_names_that_branch():
    view = recall_view(
        hit(
            kind=MemoryKind.FACT,
            content="Env vars changed: `ANTHROPIC_API_KEY` → `OLLAMA_URL`",
            details={"branch": "ollama-web-chat", "sessions": ["s1"]},
        ),
        "which env vars does the chat read?",
    )
    assert view["branch"] == "ollama-web-chat"
    assert "branch" not in recall_view(hit(kind=MemoryKind.FACT, content="Port 8765 serves the map"), "port")

"""The ToolTextSearch contract: what excerpts leave out of their tools' outputs is searched apart from
the ranked legs, over every engine (SQLite locally, OpenSearch in AWS), unchanged."""

from __future__ import annotations

import pytest
from cairn.domain.models import LEFT_OUT, IndexedMemory, Memory, MemoryFilter, MemoryKind, Scope
from cairn.domain.ports import ToolTextSearch

pytestmark = pytest.mark.contract

TEAM = "team_a"
LOG = "$ docker build .\n    the platform team asks that the release sets REPORTING_URL before tagging"


def excerpt(memory_id: str, told: str, team: str = TEAM, **fields) -> IndexedMemory:
    fields.setdefault("project", "proj")
    memory = Memory(
        id=memory_id,
        team_id=team,
        kind=MemoryKind.EXCERPT,
        content="user: why does the build fail?\n$ docker build .\n  → exit 1: failed to solve",
        details={LEFT_OUT: told} if told else {},
        **fields,
    )
    return IndexedMemory(memory=memory, vector=None)


def told(index, query: str, flt: MemoryFilter | None = None, k: int = 10, team: str = TEAM) -> list[str]:
    return [memory_id for memory_id, _ in index.search_tool_text(team, query, flt or MemoryFilter(), k)]


def test_every_search_index_searches_tool_text(search_index):
    assert isinstance(search_index, ToolTextSearch)


def test_an_excerpt_is_found_by_what_it_left_out_of_a_tools_output(search_index):
    search_index.upsert([excerpt("x1", LOG), excerpt("x2", "")])
    assert told(search_index, "who asks about the reporting url?") == ["x1"]


def test_what_an_excerpt_left_out_is_not_in_the_ranked_legs(search_index):
    search_index.upsert([excerpt("x1", LOG)])
    result = search_index.search(TEAM, "REPORTING_URL platform team", None, MemoryFilter(), 10, 10)
    assert result.lexical == ()


def test_tool_text_matches_rank_best_first_and_k_caps_them(search_index):
    search_index.upsert(
        [
            excerpt("x1", "$ make\n    set the reporting token first"),
            excerpt("x2", "$ make\n    set the reporting endpoint first"),
            excerpt("x3", "$ make\n    nothing of the kind"),
        ]
    )
    found = search_index.search_tool_text(TEAM, "reporting endpoint", MemoryFilter(), 10)
    assert [i for i, _ in found][0] == "x2" and "x3" not in [i for i, _ in found]
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert len(told(search_index, "reporting endpoint", k=1)) == 1


def test_tool_text_search_is_confined_to_team_and_filter(search_index):
    search_index.upsert(
        [
            excerpt("x1", LOG),
            excerpt("x2", LOG, project="other"),
            excerpt("x3", LOG, team="team_b"),
            excerpt("x4", LOG, scope=Scope.PERSONAL, owner="ana"),
        ]
    )
    assert told(search_index, "REPORTING_URL", MemoryFilter(project="proj")) == ["x1"]
    assert sorted(told(search_index, "REPORTING_URL", MemoryFilter(project="proj", member="ana"))) == [
        "x1",
        "x4",
    ]
    assert told(search_index, "REPORTING_URL", team="team_b") == ["x3"]


def test_a_removed_or_rewritten_excerpt_leaves_its_tool_text(search_index):
    search_index.upsert([excerpt("x1", LOG), excerpt("x2", LOG)])
    search_index.remove(TEAM, ["x1"])
    search_index.upsert([excerpt("x2", "$ make\n    something else entirely")])
    assert told(search_index, "REPORTING_URL") == []
    search_index.clear_team(TEAM)
    assert told(search_index, "something else") == []


@pytest.mark.parametrize("query", ['"', "OR AND NOT", "a* (b", "NEAR(x y)", "", "   "])
def test_no_query_string_breaks_the_tool_text_search(search_index, query):
    search_index.upsert([excerpt("x1", LOG)])
    told(search_index, query)

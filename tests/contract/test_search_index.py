"""The SearchIndex contract: every engine (SQLite locally, OpenSearch in AWS) must pass it unchanged.

Written against the port only. Vectors are 8-d (an OpenSearch index fixes its dimension at creation; the
providers create it for this suite) and built from a few orthogonal directions so nearest neighbours are
unambiguous. A provider over an engine emulator that cannot run k-NN sets `supports_knn = False` on the
index: the semantic-leg assertions are then skipped, the lexical ones still hold.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from cairn.domain.models import (
    Candidates,
    IndexedMemory,
    Memory,
    MemoryFilter,
    MemoryKind,
    Provenance,
    Scope,
)

pytestmark = pytest.mark.contract

DIM = 8
TEAM = "team_a"
OTHER_TEAM = "team_b"


def vec(*weights: float) -> tuple[float, ...]:
    """A unit vector whose first components are `weights` (the rest zero)."""
    norm = math.sqrt(sum(w * w for w in weights))
    return tuple(w / norm for w in weights) + (0.0,) * (DIM - len(weights))


def mem(memory_id: str, content: str, **fields) -> Memory:
    fields.setdefault("team_id", TEAM)
    fields.setdefault("kind", MemoryKind.FACT)
    fields.setdefault("project", "proj")
    return Memory(id=memory_id, content=content, **fields)


def doc(memory: Memory, vector: tuple[float, ...] | None = None) -> IndexedMemory:
    return IndexedMemory(memory=memory, vector=vector)


def ids(leg) -> list[str]:
    return [memory_id for memory_id, _ in leg]


def knn(index) -> bool:
    return getattr(index, "supports_knn", True)


def search(index, query: str = "", vector=None, flt: MemoryFilter | None = None, k: int = 10, team=TEAM):
    return index.search(team, query, vector, flt or MemoryFilter(), k, k)


# --- upsert / search / remove -------------------------------------------------------------------


def test_a_memory_is_found_by_its_words_and_by_its_vector(search_index):
    search_index.upsert(
        [
            doc(mem("m1", "The deploy failed because the Postgres migration timed out"), vec(1, 0)),
            doc(mem("m2", "Use ruff for linting Python code"), vec(0, 1)),
        ]
    )
    result = search(search_index, "why did the postgres migration fail?", vec(1, 0.1))
    assert isinstance(result, Candidates)
    assert ids(result.lexical) == ["m1"]
    if knn(search_index):
        assert ids(result.semantic)[0] == "m1"


def test_stemming_lets_other_forms_of_a_word_match(search_index):
    search_index.upsert([doc(mem("m1", "She was painting sunrises at the lake"))])
    assert ids(search(search_index, "paints a sunrise").lexical) == ["m1"]


def test_each_leg_is_ranked_best_first_with_higher_scores_first(search_index):
    search_index.upsert(
        [
            doc(mem("m1", "redis cache"), vec(1, 0, 0)),
            doc(mem("m2", "redis cache eviction policy for the redis cache"), vec(0.7, 0.7, 0)),
            doc(mem("m3", "unrelated words entirely"), vec(0, 0, 1)),
        ]
    )
    result = search(search_index, "redis cache eviction", vec(1, 0, 0))
    assert ids(result.lexical)[0] == "m2"
    if knn(search_index):
        assert ids(result.semantic) == ["m1", "m2", "m3"]
    for leg in (result.lexical, result.semantic) if knn(search_index) else (result.lexical,):
        scores = [score for _, score in leg]
        assert scores == sorted(scores, reverse=True)


def test_title_and_tags_are_searchable(search_index):
    search_index.upsert([doc(mem("m1", "body text", title="Kubernetes upgrade", tags=("helm",)))])
    assert ids(search(search_index, "kubernetes").lexical) == ["m1"]
    assert ids(search(search_index, "helm").lexical) == ["m1"]


def test_k_caps_each_leg(search_index):
    search_index.upsert([doc(mem(f"m{i}", f"shared word {i}"), vec(1, i / 10)) for i in range(8)])
    result = search_index.search(TEAM, "shared word", vec(1, 0), MemoryFilter(), 3, 5)
    assert len(result.lexical) == 3
    if knn(search_index):
        assert len(result.semantic) == 5


def test_a_leg_with_k_zero_is_empty(search_index):
    search_index.upsert([doc(mem("m1", "shared word"), vec(1, 0))])
    result = search_index.search(TEAM, "shared word", vec(1, 0), MemoryFilter(), 0, 0)
    assert result.lexical == () and result.semantic == ()


def test_upserting_again_replaces_the_indexed_text_and_vector(search_index):
    search_index.upsert([doc(mem("m1", "original wording about kafka"), vec(1, 0))])
    search_index.upsert([doc(mem("m1", "rewritten text about rabbitmq"), vec(0, 1))])
    assert ids(search(search_index, "kafka").lexical) == []
    assert ids(search(search_index, "rabbitmq").lexical) == ["m1"]
    if knn(search_index):
        assert ids(search(search_index, vector=vec(0, 1)).semantic) == ["m1"]


def test_removed_memories_leave_both_legs(search_index):
    search_index.upsert([doc(mem("m1", "gone soon"), vec(1, 0)), doc(mem("m2", "stays here"), vec(0, 1))])
    search_index.remove(TEAM, ["m1", "never-indexed"])
    result = search(search_index, "gone stays", vec(1, 0))
    assert ids(result.lexical) == ["m2"]
    if knn(search_index):
        assert ids(result.semantic) == ["m2"]


def test_a_memory_without_a_vector_is_found_by_words_only(search_index):
    search_index.upsert([doc(mem("m1", "no vector here")), doc(mem("m2", "vector here"), vec(1, 0))])
    result = search(search_index, "vector", vec(1, 0))
    assert sorted(ids(result.lexical)) == ["m1", "m2"]
    if knn(search_index):
        assert ids(result.semantic) == ["m2"]


def test_an_empty_query_gives_an_empty_lexical_leg_and_no_vector_an_empty_semantic_leg(search_index):
    search_index.upsert([doc(mem("m1", "anything"), vec(1, 0))])
    assert search(search_index, "", vec(1, 0)).lexical == ()
    assert search(search_index, "   ", vec(1, 0)).lexical == ()
    if knn(search_index):
        assert search(search_index, "anything", None).semantic == ()


# --- team isolation -----------------------------------------------------------------------------


def test_another_teams_memories_are_never_returned(search_index):
    search_index.upsert(
        [
            doc(mem("m1", "secret roadmap", team_id=OTHER_TEAM), vec(1, 0)),
            doc(mem("m2", "public roadmap"), vec(0, 1)),
        ]
    )
    result = search(search_index, "secret roadmap", vec(1, 0))
    assert ids(result.lexical) == ["m2"]
    if knn(search_index):
        assert ids(result.semantic) == ["m2"]


def test_the_same_memory_id_in_two_teams_is_two_documents(search_index):
    search_index.upsert(
        [
            doc(mem("m1", "alpha text", team_id=TEAM), vec(1, 0)),
            doc(mem("m1", "beta text", team_id=OTHER_TEAM), vec(0, 1)),
        ]
    )
    search_index.remove(OTHER_TEAM, ["m1"])
    assert ids(search(search_index, "alpha").lexical) == ["m1"]
    assert ids(search(search_index, "beta", team=OTHER_TEAM).lexical) == []


def test_removing_with_another_team_id_does_nothing(search_index):
    search_index.upsert([doc(mem("m1", "kept"), vec(1, 0))])
    search_index.remove(OTHER_TEAM, ["m1"])
    assert ids(search(search_index, "kept").lexical) == ["m1"]


def test_clearing_a_team_leaves_other_teams_alone(search_index):
    search_index.upsert(
        [
            doc(mem("m1", "shared word"), vec(1, 0)),
            doc(mem("m2", "shared word", team_id=OTHER_TEAM), vec(1, 0)),
        ]
    )
    search_index.clear_team(TEAM)
    cleared = search(search_index, "shared", vec(1, 0))
    assert cleared.lexical == () and cleared.semantic == ()
    if knn(search_index):
        assert ids(search(search_index, "shared", vec(1, 0), team=OTHER_TEAM).semantic) == ["m2"]


# --- filter semantics ---------------------------------------------------------------------------

# One memory per rule of MemoryFilter.admits; every one holds the word "common".
CORPUS = [
    mem("proj-fact", "common fact"),
    mem("proj-episode", "common episode", kind=MemoryKind.EPISODE),
    mem("other-project", "common other", project="elsewhere"),
    mem("team-global", "common team", scope=Scope.TEAM, project=None),
    mem("alice-personal", "common mine", scope=Scope.PERSONAL, owner="alice"),
    mem("bob-personal", "common his", scope=Scope.PERSONAL, owner="bob"),
    mem("tagged", "common tagged", tags=("db", "ops")),
    mem("in-session", "common session", provenance=Provenance(session_id="sess-1")),
    mem("superseded", "common old", superseded_by="proj-fact"),
    mem("expired", "common expired", valid_to=datetime(2025, 1, 1, tzinfo=UTC)),
]

FILTERS = {
    "default": MemoryFilter(),
    "project": MemoryFilter(project="proj"),
    "project-without-team-scope": MemoryFilter(project="proj", include_team_scope=False),
    "kinds": MemoryFilter(kinds=frozenset({MemoryKind.EPISODE})),
    "scopes": MemoryFilter(scopes=frozenset({Scope.TEAM, Scope.PERSONAL}), member="alice"),
    "member": MemoryFilter(member="alice"),
    "tags": MemoryFilter(tags=frozenset({"ops", "absent"})),
    "session": MemoryFilter(session_id="sess-1"),
    "superseded-included": MemoryFilter(include_superseded=True),
    # a key limited to projects: theirs and memories of no project, never another project's
    "key-projects": MemoryFilter(projects=frozenset({"elsewhere", "absent"}), member="alice"),
    "key-projects-none": MemoryFilter(projects=frozenset()),
    "everything-narrow": MemoryFilter(
        project="proj", kinds=frozenset({MemoryKind.FACT}), member="bob", include_superseded=True
    ),
}


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_both_legs_admit_exactly_what_memory_filter_admits(search_index, name):
    flt = FILTERS[name]
    search_index.upsert([doc(m, vec(1, i / 100)) for i, m in enumerate(CORPUS)])
    expected = sorted(m.id for m in CORPUS if flt.admits(m))
    result = search(search_index, "common", vec(1, 0), flt, k=50)
    assert sorted(ids(result.lexical)) == expected
    if knn(search_index):
        assert sorted(ids(result.semantic)) == expected


def test_a_superseding_upsert_takes_the_old_version_out_of_default_results(search_index):
    old = mem("m1", "use python 3.11", project="proj")
    search_index.upsert([doc(old, vec(1, 0))])
    search_index.upsert(
        [doc(replace(old, superseded_by="m2"), vec(1, 0)), doc(mem("m2", "use python 3.12"), vec(1, 0))]
    )
    assert ids(search(search_index, "python", vec(1, 0)).lexical) == ["m2"]
    if knn(search_index):
        assert ids(search(search_index, "python", vec(1, 0)).semantic) == ["m2"]
    history = search(search_index, "python", vec(1, 0), MemoryFilter(include_superseded=True))
    if knn(search_index):
        assert sorted(ids(history.semantic)) == ["m1", "m2"]


# --- hostile queries ----------------------------------------------------------------------------

HOSTILE = [
    "?",
    "what is it?",
    '"',
    'say "hello',
    "AND OR NOT",
    "NOT",
    "a AND",
    "*",
    "pre*",
    "(",
    "(unbalanced",
    ")",
    "col:val",
    "body:secret",
    "NEAR(a b)",
    "^start",
    "-minus +plus",
    "{body head}: x",
    "'; DROP TABLE search_docs; --",
    "🦀 rust 🚀",
    "🦀",
    "日本語のクエリ",
    "\x00\x01 control",
    "x" * 10_000,
    " ".join(["word"] * 2_000),
]


@pytest.mark.parametrize("query", HOSTILE, ids=lambda q: repr(q[:20]))
def test_no_query_string_breaks_the_search(search_index, query):
    search_index.upsert([doc(mem("m1", "rust crab says hello; pre-commit hooks and body text"), vec(1, 0))])
    result = search(search_index, query, vec(1, 0))
    assert isinstance(result, Candidates)
    if knn(search_index):
        assert ids(result.semantic) == ["m1"]


def test_operator_words_and_punctuation_are_searched_as_plain_words(search_index):
    search_index.upsert([doc(mem("m1", "the crab emoji means rust")), doc(mem("m2", "col val pair"))])
    assert ids(search(search_index, "rust?").lexical) == ["m1"]
    assert ids(search(search_index, '"rust"').lexical) == ["m1"]
    assert ids(search(search_index, "col:val").lexical) == ["m2"]

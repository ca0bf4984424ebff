"""The OpenSearch request bodies, checked against the API's shapes (no emulator runs k-NN here).

Shapes from the OpenSearch documentation: a `knn_vector` mapping with an HNSW `method`; a k-NN query
`{"knn": {<field>: {"vector", "k", "filter"}}}` with the filter inside `knn` (efficient filtering); and
`_msearch` as NDJSON, a header line then a body line per search, ending with a newline.
"""

from __future__ import annotations

import json

import pytest
from cairn.adapters.aws import opensearch_bodies as b
from cairn.adapters.aws.opensearch_bodies import (
    MAX_QUERY_WORDS,
    VECTOR_FIELD,
    build_bulk_body,
    build_knn_query,
    build_lexical_query,
    build_msearch_body,
    build_stored_vectors_query,
    document,
    filter_clauses,
    index_body,
    plain_words,
)
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Provenance, Scope

pytestmark = pytest.mark.contract

TEAM = "tm_a"


def test_the_index_maps_text_with_the_english_analyzer_and_filters_as_keywords():
    props = index_body(384)["mappings"]["properties"]
    assert props["text"] == {"type": "text", "analyzer": "english"}
    assert props["title"] == {"type": "text", "analyzer": "english"}
    for name in ("team_id", "project", "scope", "kind", "owner", "tags", "session_id"):
        assert props[name] == {"type": "keyword"}
    assert props["current"] == {"type": "boolean"}


def test_the_vector_field_is_an_hnsw_cosine_knn_vector_of_the_given_dimension():
    body = index_body(384, engine="faiss")
    vector = body["mappings"]["properties"][VECTOR_FIELD]
    assert vector["type"] == "knn_vector" and vector["dimension"] == 384
    assert vector["method"]["name"] == "hnsw"
    assert vector["method"]["engine"] == "faiss"
    assert vector["method"]["space_type"] == "cosinesimil"
    assert body["settings"]["index"]["knn"] is True


def test_an_unknown_knn_engine_is_refused():
    with pytest.raises(ValueError):
        index_body(8, engine="nmslib-typo")


def test_the_knn_query_puts_vector_k_and_the_filter_inside_knn():
    body = build_knn_query(TEAM, [0.5, 0.5], MemoryFilter(project="p"), 7)
    assert body["size"] == 7
    ((field, spec),) = body["query"]["knn"].items()
    assert field == VECTOR_FIELD
    assert spec["vector"] == [0.5, 0.5]
    assert spec["k"] == 7
    assert spec["filter"] == {"bool": {"filter": filter_clauses(TEAM, MemoryFilter(project="p"))}}
    assert set(body["query"]) == {"knn"}  # no post-filter outside knn: it would cut below k results


def test_the_lexical_query_is_a_multi_match_under_the_same_filter():
    body = build_lexical_query(TEAM, "why did the deploy fail?", MemoryFilter(), 5)
    assert body["size"] == 5
    query = body["query"]["bool"]
    (match,) = query["must"]
    assert match["multi_match"]["fields"] == ["title^2", "text"]
    assert match["multi_match"]["query"] == "why did the deploy fail"
    assert query["filter"] == filter_clauses(TEAM, MemoryFilter())


def test_a_huge_query_is_capped_to_distinct_words():
    words = " ".join(f"w{i}" for i in range(5000)) + " w1 w1"
    text = build_lexical_query(TEAM, words, MemoryFilter(), 5)["query"]["bool"]["must"][0]["multi_match"]
    assert len(text["query"].split()) == MAX_QUERY_WORDS


def test_punctuation_becomes_spaces_in_documents_and_queries_alike():
    assert plain_words("col:val v1.2 pre-commit 'quoted'") == "col val v1 2 pre commit quoted"


def test_every_filter_starts_with_the_team_and_hides_superseded_by_default():
    clauses = filter_clauses(TEAM, MemoryFilter())
    assert clauses[0] == {"term": {"team_id": TEAM}}
    assert {"term": {"current": True}} in clauses
    assert {"term": {"current": True}} not in filter_clauses(TEAM, MemoryFilter(include_superseded=True))


def test_a_project_filter_also_admits_team_scope_unless_told_not_to():
    with_team = filter_clauses(TEAM, MemoryFilter(project="p"))
    assert {
        "bool": {
            "should": [{"term": {"project": "p"}}, {"term": {"scope": "team"}}],
            "minimum_should_match": 1,
        }
    } in with_team
    without = filter_clauses(TEAM, MemoryFilter(project="p", include_team_scope=False))
    assert {"bool": {"should": [{"term": {"project": "p"}}], "minimum_should_match": 1}} in without


def test_personal_memories_need_the_member_as_owner():
    clauses = filter_clauses(TEAM, MemoryFilter(member="alice"))
    assert {
        "bool": {
            "should": [
                {"bool": {"must_not": [{"term": {"scope": "personal"}}]}},
                {"term": {"owner": "alice"}},
            ],
            "minimum_should_match": 1,
        }
    } in clauses


def test_kinds_scopes_tags_and_session_become_term_filters():
    flt = MemoryFilter(
        kinds=frozenset({MemoryKind.FACT, MemoryKind.DECISION}),
        scopes=frozenset({Scope.PROJECT}),
        tags=frozenset({"db"}),
        session_id="ses_1",
    )
    clauses = filter_clauses(TEAM, flt)
    assert {"terms": {"kind": ["decision", "fact"]}} in clauses
    assert {"terms": {"scope": ["project"]}} in clauses
    assert {"terms": {"tags": ["db"]}} in clauses
    assert {"term": {"session_id": "ses_1"}} in clauses


def test_msearch_is_header_and_body_pairs_in_ndjson_ending_with_a_newline():
    lexical = build_lexical_query(TEAM, "deploy", MemoryFilter(), 5)
    knn = build_knn_query(TEAM, [1.0, 0.0], MemoryFilter(), 5)
    ndjson = build_msearch_body("cairn-memories", [lexical, knn], routing=TEAM)
    assert ndjson.endswith("\n")
    lines = [json.loads(line) for line in ndjson.splitlines()]
    assert lines == [
        {"index": "cairn-memories", "routing": TEAM},
        lexical,
        {"index": "cairn-memories", "routing": TEAM},
        knn,
    ]
    assert all("\n" not in line for line in ndjson.splitlines())


def test_bulk_deletes_have_no_source_line():
    ndjson = build_bulk_body(
        [({"delete": {"_index": "i", "_id": "a"}}, None), ({"index": {"_id": "b"}}, {"x": 1})]
    )
    assert [json.loads(line) for line in ndjson.splitlines()] == [
        {"delete": {"_index": "i", "_id": "a"}},
        {"index": {"_id": "b"}},
        {"x": 1},
    ]


def test_a_document_carries_the_filter_fields_and_omits_a_missing_vector():
    m = Memory(
        id="mem_1",
        team_id=TEAM,
        kind=MemoryKind.FACT,
        content="Use ruff",
        title="Lint",
        tags=("py",),
        provenance=Provenance(session_id="ses_1"),
        superseded_by="mem_2",
    )
    doc = document(m, None)
    assert VECTOR_FIELD not in doc
    assert doc["team_id"] == TEAM and doc["session_id"] == "ses_1" and doc["tags"] == ["py"]
    assert doc["current"] is False
    assert document(m, (0.1, 0.2))[VECTOR_FIELD] == [0.1, 0.2]


def _knn_response(*scored: tuple[str, float]) -> dict:
    return {"hits": {"hits": [{"_source": {"memory_id": m}, "_score": s} for m, s in scored]}}


def test_a_cosinesimil_knn_score_is_handed_on_as_the_cosine_it_encodes():
    # OpenSearch k-NN docs, "Spaces" (docs.opensearch.org/latest/mappings/supported-field-types/knn-spaces/):
    # cosinesimil has d = 1 - cos and score = (2 - d) / 2 = (1 + cos) / 2
    assert b.SPACE_TYPE == "cosinesimil"
    for cos in (1.0, 0.9, 0.5, 0.25, 0.0, -0.3, -1.0):
        documented = (2 - (1 - cos)) / 2
        ((_, handed_on),) = b.knn_hits(_knn_response(("m1", documented)))
        assert handed_on == pytest.approx(cos, abs=1e-9)


def test_knn_hits_keep_the_engines_order_and_clamp_rounding_past_the_ends():
    response = _knn_response(("a", 1.0000001), ("b", 0.55), ("c", -0.0000001))
    assert [m for m, _ in b.knn_hits(response)] == ["a", "b", "c"]
    assert b.knn_hits(response)[0][1] == 1.0 and b.knn_hits(response)[2][1] == -1.0
    # the lexical leg's BM25 score is the engine's own, unconverted
    assert b.hits(response)[1] == ("b", 0.55)


def test_stored_vectors_are_asked_by_team_and_memory_with_the_vector_field_in_source():
    body = build_stored_vectors_query(TEAM, ["m1", "m2", "m1"])
    assert body["size"] == 2
    assert body["query"] == {
        "bool": {"filter": [{"term": {"team_id": TEAM}}, {"terms": {"memory_id": ["m1", "m2"]}}]}
    }
    # the vector, and what says it is still the memory's: the model that made it and the text it embedded
    assert set(body["_source"]) == {"memory_id", "embedding_version", "text", VECTOR_FIELD}
    assert "excludes" not in index_body(384)["mappings"].get("_source", {})  # nothing strips it

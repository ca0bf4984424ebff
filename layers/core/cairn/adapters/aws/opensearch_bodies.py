"""Pure builders of the OpenSearch request bodies the search index sends (no client, no I/O).

Kept apart so the k-NN bodies, which no local emulator executes, are checked by contract tests against
the OpenSearch API shapes. The filter clauses are the translation of `MemoryFilter.admits`; they must
admit exactly what it admits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from cairn.domain.models import Memory, MemoryFilter, Scope

VECTOR_FIELD = "vector"
# what an excerpt leaves out of its tools' outputs (`Memory.tool_text`): a field no ranked leg queries
TOOL_TEXT_FIELD = "tool_text"
TOOL_TEXT_MAPPING = {"type": "text", "analyzer": "english"}
KEYWORD_FIELDS = (
    "memory_id",
    "team_id",
    "project",
    "scope",
    "kind",
    "owner",
    "tags",
    "session_id",
    "embedding_version",
)
_KNN_ENGINES = ("lucene", "faiss")
#: The k-NN space of the vector field. For it OpenSearch scores a hit `(1 + cos) / 2` (k-NN docs, "Spaces":
#: https://docs.opensearch.org/latest/mappings/supported-field-types/knn-spaces/, d = 1 - cos and
#: score = (2 - d) / 2), so `knn_hits` turns the score back into the cosine the relevance judge reads.
SPACE_TYPE = "cosinesimil"
MAX_QUERY_WORDS = 256  # far below the engine's boolean clause limit (1024), far above a real question
_NON_WORD = re.compile(r"[\W_]+")


def plain_words(text: str) -> str:
    """Punctuation to spaces, on documents and queries alike.

    The standard tokenizer keeps `col:val` or `v1.2` as one token, so a query and a text that spell
    the same words with different punctuation would not meet; splitting both the same way makes
    every character of a query an ordinary word character or a separator (no query syntax exists in
    `multi_match` anyway, so this is about matching, not escaping).
    """
    return _NON_WORD.sub(" ", text).strip()


def query_words(text: str) -> str:
    """The query as distinct plain words in order, capped so no query can exceed the clause limit."""
    words = dict.fromkeys(plain_words(text).split())
    return " ".join(list(words)[:MAX_QUERY_WORDS])


def doc_id(team_id: str, memory_id: str) -> str:
    """Documents of all teams share an index; the team in the id keeps equal memory ids apart."""
    return f"{team_id}:{memory_id}"


def index_body(dimension: int, engine: str = "lucene", shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    """Settings and mappings of the memories index (also the `template` of its index template)."""
    if engine not in _KNN_ENGINES:
        raise ValueError(f"k-NN engine must be one of {_KNN_ENGINES}")
    properties: dict[str, Any] = {name: {"type": "keyword"} for name in KEYWORD_FIELDS}
    properties.update(
        {
            "title": {"type": "text", "analyzer": "english"},
            "text": {"type": "text", "analyzer": "english"},
            TOOL_TEXT_FIELD: TOOL_TEXT_MAPPING,
            "current": {"type": "boolean"},
            "pinned": {"type": "boolean"},
            "confidence": {"type": "float"},
            "created_at": {"type": "date"},
            "updated_at": {"type": "date"},
            VECTOR_FIELD: {
                "type": "knn_vector",
                "dimension": dimension,
                "method": {
                    "name": "hnsw",
                    "engine": engine,
                    "space_type": SPACE_TYPE,
                    "parameters": {"m": 16, "ef_construction": 128},
                },
            },
        }
    )
    return {
        "settings": {"index": {"knn": True, "number_of_shards": shards, "number_of_replicas": replicas}},
        # strict: a field typo in the adapter fails loudly instead of being mapped as something else
        "mappings": {"dynamic": "strict", "properties": properties},
    }


def index_template_body(
    index_pattern: str, dimension: int, engine: str = "lucene", shards: int = 1, replicas: int = 0
) -> dict[str, Any]:
    return {"index_patterns": [index_pattern], "template": index_body(dimension, engine, shards, replicas)}


def document(m: Memory, vector: Sequence[float] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "memory_id": m.id,
        "team_id": m.team_id,
        "project": m.project,
        "scope": m.scope.value,
        "kind": m.kind.value,
        "owner": m.owner,
        "tags": list(m.tags),
        "session_id": m.provenance.session_id,
        "embedding_version": m.embedding_version,
        "title": plain_words(m.title) if m.title else None,
        "text": plain_words(m.search_text()),
        "current": m.is_current,
        "pinned": m.pinned,
        "confidence": m.confidence,
        "created_at": m.created_at.isoformat(),
        "updated_at": m.updated_at.isoformat(),
    }
    if told := m.tool_text:
        doc[TOOL_TEXT_FIELD] = plain_words(told)
    if vector is not None:
        doc[VECTOR_FIELD] = [float(x) for x in vector]
    return doc


def filter_clauses(team_id: str, flt: MemoryFilter) -> list[dict[str, Any]]:
    """`bool.filter` clauses equivalent to `flt.admits` plus the team; order follows `admits`."""
    clauses: list[dict[str, Any]] = [{"term": {"team_id": team_id}}]
    if not flt.include_superseded:
        clauses.append({"term": {"current": True}})
    if flt.kinds:
        clauses.append({"terms": {"kind": sorted(k.value for k in flt.kinds)}})
    if flt.scopes:
        clauses.append({"terms": {"scope": sorted(s.value for s in flt.scopes)}})
    # a personal memory is visible only when its owner is the member (both absent counts as equal)
    owner_matches = (
        {"term": {"owner": flt.member}}
        if flt.member is not None
        else {"bool": {"must_not": [{"exists": {"field": "owner"}}]}}
    )
    clauses.append(
        _any_of([{"bool": {"must_not": [{"term": {"scope": Scope.PERSONAL.value}}]}}, owner_matches])
    )
    if flt.project is not None:
        options: list[dict[str, Any]] = [{"term": {"project": flt.project}}]
        if flt.include_team_scope:
            options.append({"term": {"scope": Scope.TEAM.value}})
        clauses.append(_any_of(options))
    if flt.projects is not None:
        no_project = {"bool": {"must_not": [{"exists": {"field": "project"}}]}}
        clauses.append(_any_of([{"terms": {"project": sorted(flt.projects)}}, no_project]))
    if flt.tags:
        clauses.append({"terms": {"tags": sorted(flt.tags)}})
    if flt.session_id:
        clauses.append({"term": {"session_id": flt.session_id}})
    return clauses


def _any_of(options: list[dict[str, Any]]) -> dict[str, Any]:
    return {"bool": {"should": options, "minimum_should_match": 1}}


def build_lexical_query(team_id: str, text: str, flt: MemoryFilter, k: int) -> dict[str, Any]:
    """The BM25 leg: title and text with the english analyzer, title counting double."""
    return _bm25(
        team_id, flt, k, {"multi_match": {"query": query_words(text), "fields": ["title^2", "text"]}}
    )


def build_tool_text_query(team_id: str, text: str, flt: MemoryFilter, k: int) -> dict[str, Any]:
    """`ToolTextSearch`: BM25 over the excerpts' tool text alone, with the english analyzer."""
    return _bm25(team_id, flt, k, {"match": {TOOL_TEXT_FIELD: query_words(text)}})


def _bm25(team_id: str, flt: MemoryFilter, k: int, match: dict[str, Any]) -> dict[str, Any]:
    """The `k` best memory ids by `match`'s BM25 among what the team's filter admits."""
    return {
        "size": k,
        "_source": ["memory_id"],
        "track_total_hits": False,
        "query": {"bool": {"must": [match], "filter": filter_clauses(team_id, flt)}},
    }


def build_knn_query(team_id: str, vector: Sequence[float], flt: MemoryFilter, k: int) -> dict[str, Any]:
    """The k-NN leg, with the filter inside `knn` (efficient filtering: the k nearest that pass it)."""
    return {
        "size": k,
        "_source": ["memory_id"],
        "query": {
            "knn": {
                VECTOR_FIELD: {
                    "vector": [float(x) for x in vector],
                    "k": k,
                    "filter": {"bool": {"filter": filter_clauses(team_id, flt)}},
                }
            }
        },
    }


def build_stored_vectors_query(team_id: str, memory_ids: Sequence[str]) -> dict[str, Any]:
    """The entries of these memories with what tells whether their vector is still the memory's: the
    vector (OpenSearch returns a document's original JSON, the `knn_vector` field included, in `_source`
    unless the mapping excludes it: https://docs.opensearch.org/latest/mappings/metadata-fields/source/),
    the model that made it and the text it was made from."""
    ids = list(dict.fromkeys(memory_ids))
    return {
        "size": len(ids),
        "query": {"bool": {"filter": [{"term": {"team_id": team_id}}, {"terms": {"memory_id": ids}}]}},
        "_source": ["memory_id", "embedding_version", "text", VECTOR_FIELD],
    }


def build_msearch_body(index: str, searches: Sequence[dict[str, Any]], routing: str | None = None) -> str:
    """NDJSON for `_msearch`: a header line then a body line per search, newline-terminated."""
    header: dict[str, Any] = {"index": index}
    if routing is not None:
        header["routing"] = routing
    lines = []
    for body in searches:
        lines += [json.dumps(header, separators=(",", ":")), json.dumps(body, separators=(",", ":"))]
    return "\n".join(lines) + "\n"


def build_bulk_body(actions: Sequence[tuple[dict[str, Any], dict[str, Any] | None]]) -> str:
    """NDJSON for `_bulk`: each action line, followed by its source unless it is a delete."""
    lines = []
    for action, source in actions:
        lines.append(json.dumps(action, separators=(",", ":")))
        if source is not None:
            lines.append(json.dumps(source, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(lines) + "\n"


def hits(response: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """(memory id, score) of one search response, in the engine's order (best first)."""
    return tuple(
        (h["_source"]["memory_id"], float(h["_score"] or 0.0))
        for h in response.get("hits", {}).get("hits", [])
    )


def cosine_of_score(score: float) -> float:
    """The cosine behind a `cosinesimil` k-NN `_score` of `(1 + cos) / 2`, clamped to [-1, 1]."""
    return max(-1.0, min(1.0, 2.0 * score - 1.0))


def knn_hits(response: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """(memory id, cosine) of one k-NN response: the semantic leg on the scale every index hands the
    relevance judge and the near-duplicate threshold (a cosine), not OpenSearch's own."""
    return tuple((memory_id, cosine_of_score(score)) for memory_id, score in hits(response))

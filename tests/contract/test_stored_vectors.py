"""The StoredVectors contract, over every SearchIndex: the vector an entry was written with comes back by
the memory, for the model that made it and the memory's current text only.

Consolidation decides a near duplicate by the exact cosine to these vectors, in both modes, instead of
by a k-NN score (approximate on a real domain, absent on osmem-server). OpenSearch returns a document's
original JSON, the `knn_vector` field included, in `_source` unless the mapping excludes it (OpenSearch
docs, "Source": https://docs.opensearch.org/latest/mappings/metadata-fields/source/); the memories
index excludes nothing, and `test_opensearch_bodies` pins that the request asks for the field.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from cairn.domain.models import IndexedMemory, Memory, MemoryKind, vector_key
from cairn.domain.ports import StoredVectors

pytestmark = pytest.mark.contract

MODEL = "model-1"
DIM = 8  # the dimension the providers create the search index with


def _memory(memory_id: str, content: str, team: str = "team_a", **fields) -> Memory:
    fields.setdefault("kind", MemoryKind.FACT)
    fields.setdefault("project", "proj")
    return Memory(id=memory_id, team_id=team, content=content, embedding_version=MODEL, **fields)


def _entry(memory: Memory, vector: tuple[float, ...], model: str = MODEL) -> IndexedMemory:
    """As the indexer writes it: the model that made the vector, and the key of model and text."""
    stamped = replace(memory, embedding_version=model)
    return IndexedMemory(stamped, vector, vector_key(model, stamped.search_text()))


def _vector(*weights: float) -> tuple[float, ...]:
    return tuple(weights) + (0.0,) * (DIM - len(weights))


def test_every_search_index_gives_back_stored_vectors(search_index):
    assert isinstance(search_index, StoredVectors)


def test_an_entrys_vector_comes_back_by_its_memory_as_written(search_index):
    first = _memory("m1", "the stub server listens on port 9100", title="stub port", tags=("ports",))
    second = _memory("m2", "deploys go through the staging stack first")
    search_index.upsert([_entry(first, _vector(0.6, 0.8)), _entry(second, _vector(0.0, 0.28, 0.96))])
    found = search_index.stored_vectors([first, second, _memory("m3", "never indexed")], MODEL)
    assert sorted(found) == ["m1", "m2"]
    assert found["m1"] == pytest.approx(_vector(0.6, 0.8), abs=1e-7)  # float32 at worst
    assert found["m2"] == pytest.approx(_vector(0.0, 0.28, 0.96), abs=1e-7)


def test_a_vector_of_another_model_or_of_an_older_text_is_not_offered(search_index):
    memory = _memory("m1", "the api listens on 8080")
    search_index.upsert([_entry(memory, _vector(1.0))])
    assert search_index.stored_vectors([memory], "model-2") == {}
    rewritten = replace(memory, content="the api listens on 8081")
    assert search_index.stored_vectors([rewritten], MODEL) == {}


def test_a_removed_entry_offers_nothing_and_an_entry_without_a_vector_neither(search_index):
    gone = _memory("m1", "a fact about the build cache")
    bare = _memory("m2", "a fact written without a vector")
    search_index.upsert([_entry(gone, _vector(1.0)), IndexedMemory(bare, None, None)])
    search_index.remove("team_a", ["m1"])
    assert search_index.stored_vectors([gone, bare], MODEL) == {}

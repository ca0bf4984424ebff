"""The VectorCache contract: a vector stored with its key comes back for that key, and only for it."""

from __future__ import annotations

import pytest
from cairn.domain.models import IndexedMemory, Memory, MemoryKind, vector_key

pytestmark = pytest.mark.contract


def _doc(memory_id: str, text: str, vector: tuple[float, ...], key: str | None) -> IndexedMemory:
    memory = Memory(id=memory_id, team_id="team_a", kind=MemoryKind.FACT, content=text, project="p")
    return IndexedMemory(memory=memory, vector=vector, text_key=key)


def test_a_stored_vector_comes_back_under_its_key_and_an_unknown_key_gives_nothing(vector_cache):
    key = vector_key("model-1", "the stub listens on 9100")
    vector_cache.upsert([_doc("mem_1", "the stub listens on 9100", (0.6, 0.8), key)])
    found = vector_cache.cached_vectors([key, vector_key("model-2", "the stub listens on 9100")])
    assert list(found) == [key]
    assert found[key] == pytest.approx([0.6, 0.8])


def test_a_replaced_or_removed_memory_no_longer_offers_its_old_vector(vector_cache):
    old, new = vector_key("m", "old text"), vector_key("m", "new text")
    vector_cache.upsert([_doc("mem_1", "old text", (1.0, 0.0), old)])
    vector_cache.upsert([_doc("mem_1", "new text", (0.0, 1.0), new)])
    assert vector_cache.cached_vectors([old]) == {}
    assert vector_cache.cached_vectors([new])[new] == pytest.approx([0.0, 1.0])
    vector_cache.remove("team_a", ["mem_1"])
    assert vector_cache.cached_vectors([new]) == {}


def test_a_vector_stored_without_a_key_is_never_offered(vector_cache):
    vector_cache.upsert([_doc("mem_1", "text", (1.0, 0.0), None)])
    assert vector_cache.cached_vectors([vector_key("m", "text")]) == {}

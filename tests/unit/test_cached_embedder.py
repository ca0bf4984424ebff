"""CachingEmbedder: the model sees each text once; known vectors come back from the process or the cache."""

from __future__ import annotations

from cairn.adapters.cached_embedder import CachingEmbedder
from cairn.domain.models import vector_key


class Model:
    version, dimension = "fake-2", 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return [[float(len(t)), 1.0] for t in texts]

    def embed_query(self, text):
        self.seen.append(text)
        return [0.0, 1.0]


class Cache:
    def __init__(self, known: dict[str, list[float]]) -> None:
        self.known = known

    def cached_vectors(self, keys):
        return {k: self.known[k] for k in keys if k in self.known}


def test_a_text_embedded_once_is_never_sent_to_the_model_again_and_order_is_kept():
    model = Model()
    embedder = CachingEmbedder(model)
    first = embedder.embed(["alpha", "be", "alpha"])
    again = embedder.embed(["be", "gamma", "alpha"])
    assert first == [[5.0, 1.0], [2.0, 1.0], [5.0, 1.0]]
    assert again == [[2.0, 1.0], [5.0, 1.0], [5.0, 1.0]]
    assert model.seen == ["alpha", "be", "gamma"]


def test_a_vector_the_cache_holds_for_this_model_and_text_is_used_instead_of_the_model():
    model = Model()
    cache = Cache(
        {vector_key("fake-2", "stored"): [0.6, 0.8], vector_key("other-model", "fresh"): [1.0, 0.0]}
    )
    embedder = CachingEmbedder(model, cache)
    assert embedder.embed(["stored", "fresh"]) == [[0.6, 0.8], [5.0, 1.0]]
    assert model.seen == ["fresh"]


def test_queries_always_go_to_the_model():
    model = Model()
    embedder = CachingEmbedder(model)
    embedder.embed_query("q")
    embedder.embed_query("q")
    assert model.seen == ["q", "q"]


def test_only_the_most_recent_vectors_are_kept_in_process():
    model = Model()
    embedder = CachingEmbedder(model, recent=2)
    embedder.embed(["a", "bb", "ccc"])
    embedder.embed(["a"])
    assert model.seen == ["a", "bb", "ccc", "a"]

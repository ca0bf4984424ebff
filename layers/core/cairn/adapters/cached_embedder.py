"""An `Embedder` that never embeds the same text with the same model twice.

A text's vector is looked up first among the vectors embedded recently in this process (the pipeline
embeds a candidate for its near-duplicate check, then the indexer embeds the memory it became: the
same text), then in a `VectorCache` (the local index keeps every stored vector under its `vector_key`,
so a reindex or a re-run finds them there), and only the rest goes to the model, in one bulk call.
Queries always go straight to the model: they are rarely repeated and must stay on the fast path.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from cairn.domain.models import vector_key
from cairn.domain.ports import Embedder, VectorCache

RECENT = 4096  # vectors kept in process, as float32 (~6 MB at 384-d; as lists of floats it was ~50 MB)


class CachingEmbedder:
    def __init__(self, inner: Embedder, cache: VectorCache | None = None, recent: int = RECENT) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self._cache = cache
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = recent
        self._lock = threading.Lock()
        self.embedded = 0  # texts that went to the model (for tests and benchmarks)

    @property
    def version(self) -> str:
        # read through: a `ServingEmbedder` changes model when a reindex swaps the served vectors
        return self.inner.version

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        version = self.inner.version
        keys = [vector_key(version, t) for t in texts]
        found: dict[str, list[float]] = {}
        with self._lock:
            for key in keys:
                if key in self._recent:
                    found[key] = self._recent[key].tolist()
                    self._recent.move_to_end(key)
        wanted = [k for k in dict.fromkeys(keys) if k not in found]
        if wanted and self._cache is not None:
            found.update(self._cache.cached_vectors(wanted))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            vectors = self.inner.embed(list(todo.values()))
            if self.inner.version != version:  # the served model changed meanwhile: not under these keys
                return self.embed(texts)
            self.embedded += len(todo)
            found.update(zip(todo, vectors, strict=True))
        with self._lock:
            for key in keys:
                if key not in self._recent:
                    self._recent[key] = np.asarray(found[key], dtype=np.float32)
                self._recent.move_to_end(key)
            while len(self._recent) > self._size:
                self._recent.popitem(last=False)
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

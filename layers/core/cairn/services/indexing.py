"""Keeps the search index in step with the memories: embed, then upsert or remove.

The memory service calls it with each write in local mode (`prepare` outside the write's transaction,
`write` inside it, so the memory and its index entries commit together); in AWS the indexer Lambda
calls `index` from the DynamoDB stream. The index is derived data, so re-running it over the same
memories is harmless. All of a call's texts go to the embedder at once (it sorts them by length and
spreads the batches over the cores); each vector carries its `vector_key`, so an embedder that caches
(`CachingEmbedder`) never computes it again. Each entry's memory is stamped with the `embedding_version`
that made its vector: the local index files it in that model's set, OpenSearch stores it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from cairn.domain.errors import Unavailable
from cairn.domain.models import IndexedMemory, Memory, vector_key
from cairn.domain.ports import Embedder, SearchIndex, VersionedIndex


class MemoryIndexer:
    def __init__(self, index: SearchIndex, embedder: Embedder, batch_size: int = 512) -> None:
        self._index = index
        self._embedder = embedder
        self._batch_size = batch_size

    @property
    def version(self) -> str:
        """The model whose vectors this indexer writes now."""
        return self._embedder.version

    def index(self, memories: Sequence[Memory]) -> None:
        """Embed each memory's `search_text()` and upsert it, `batch_size` memories at a time."""
        for start in range(0, len(memories), self._batch_size):
            self.write(self.prepare(memories[start : start + self._batch_size]))

    def prepare(self, memories: Sequence[Memory]) -> list[IndexedMemory]:
        """The index entries of `memories`, embedded (the slow part, done before any transaction)."""
        if not memories:
            return []
        texts = [m.search_text() for m in memories]
        while True:  # the model that made the vectors, read on both sides of a swap of served models
            version = self._embedder.version
            vectors = self._embedder.embed(texts)
            if self._embedder.version == version:
                break
        return [
            IndexedMemory(
                memory=replace(m, embedding_version=version), vector=tuple(v), text_key=vector_key(version, t)
            )
            for m, v, t in zip(memories, vectors, texts, strict=True)
        ]

    def write(self, docs: Sequence[IndexedMemory]) -> None:
        """Upsert `docs`; ones embedded with a model the index stopped serving meanwhile (a reindex
        swapped models between `prepare` and this write) are embedded again with the served one."""
        if docs and isinstance(self._index, VersionedIndex):
            active = self._index.active_version()
            stale = {d.memory.id for d in docs if d.memory.embedding_version not in (None, active)}
            if stale and self._embedder.version == active:
                redone = self.prepare([d.memory for d in docs if d.memory.id in stale])
                again = {d.memory.id: d for d in redone}
                docs = [again.get(d.memory.id, d) for d in docs]
        self._index.upsert(docs)

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        self._index.remove(team_id, memory_ids)


class CarriedVectorsOnly:
    """The indexer of an import in AWS: it writes the entries whose vector the import carried (before
    the table, so the stream's indexer finds them) and leaves every other memory to the stream."""

    def __init__(self, index: SearchIndex) -> None:
        self._index = index

    def index(self, memories: Sequence[Memory]) -> None:
        return None

    def prepare(self, memories: Sequence[Memory]) -> list[IndexedMemory]:
        return []

    def write(self, docs: Sequence[IndexedMemory]) -> None:
        # an upsert is idempotent: a busy domain that timed out gets the same batch again, twice
        for attempt in range(WRITE_ATTEMPTS):
            try:
                self._index.upsert(docs)
                return
            except Unavailable:
                if attempt == WRITE_ATTEMPTS - 1:
                    raise
                time.sleep(2.0 * (attempt + 1))

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        return None


WRITE_ATTEMPTS = 3

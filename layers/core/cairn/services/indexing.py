"""Keeps the search index in step with the memories: embed, then upsert or remove.

The memory service calls it with each write in local mode (`prepare` outside the write's transaction,
`write` inside it, so the memory and its index entries commit together); in AWS the indexer Lambda
calls `index` from the DynamoDB stream. The index is derived data, so re-running it over the same
memories is harmless. All of a call's texts go to the embedder at once (it sorts them by length and
spreads the batches over the cores); each vector carries its `vector_key`, so an embedder that caches
(`CachingEmbedder`) never computes it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.domain.models import IndexedMemory, Memory, vector_key
from cairn.domain.ports import Embedder, SearchIndex


class MemoryIndexer:
    def __init__(self, index: SearchIndex, embedder: Embedder, batch_size: int = 512) -> None:
        self._index = index
        self._embedder = embedder
        self._batch_size = batch_size

    def index(self, memories: Sequence[Memory]) -> None:
        """Embed each memory's `search_text()` and upsert it, `batch_size` memories at a time."""
        for start in range(0, len(memories), self._batch_size):
            self.write(self.prepare(memories[start : start + self._batch_size]))

    def prepare(self, memories: Sequence[Memory]) -> list[IndexedMemory]:
        """The index entries of `memories`, embedded (the slow part, done before any transaction)."""
        if not memories:
            return []
        texts = [m.search_text() for m in memories]
        vectors = self._embedder.embed(texts)
        version = self._embedder.version
        return [
            IndexedMemory(memory=m, vector=tuple(v), text_key=vector_key(version, t))
            for m, v, t in zip(memories, vectors, texts, strict=True)
        ]

    def write(self, docs: Sequence[IndexedMemory]) -> None:
        self._index.upsert(docs)

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        self._index.remove(team_id, memory_ids)

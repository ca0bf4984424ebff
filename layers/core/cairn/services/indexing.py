"""Keeps the search index in step with the memories: embed, then upsert or remove.

The memory service calls it after each write in local mode; in AWS the indexer Lambda calls it from
the DynamoDB stream. The index is derived data, so re-running it over the same memories is harmless.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.domain.models import IndexedMemory, Memory
from cairn.domain.ports import Embedder, SearchIndex


class MemoryIndexer:
    def __init__(self, index: SearchIndex, embedder: Embedder, batch_size: int = 64) -> None:
        self._index = index
        self._embedder = embedder
        self._batch_size = batch_size

    def index(self, memories: Sequence[Memory]) -> None:
        """Embed each memory's `search_text()` and upsert it, one batch of the embedder at a time."""
        for start in range(0, len(memories), self._batch_size):
            batch = memories[start : start + self._batch_size]
            vectors = self._embedder.embed([m.search_text() for m in batch])
            self._index.upsert(
                [IndexedMemory(memory=m, vector=tuple(v)) for m, v in zip(batch, vectors, strict=True)]
            )

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        self._index.remove(team_id, memory_ids)

"""An `Embedder` that embeds with the model whose vectors the index serves, so a query and the vectors
it is compared with always come from the same model.

After a model change (the configured model's `version` differs from the vectors stored), the local
index keeps serving the old model's vectors until a reindex has built the new model's and swapped
them in (`SqliteSearchIndex.swap`). Until then queries and writes must use the old model: this picks,
on every call, the model of the index's active version among those this process can load, and the
configured one (`target`) once the swap is done. When the active model cannot be loaded here, a query
fails (recall then answers by keywords alone) rather than being compared with another model's vectors,
and writes are embedded with the target model (the index files those vectors with the next model's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cairn.domain.models import ModelVector
from cairn.domain.ports import Embedder


class ServingEmbedder:
    def __init__(self, target: Embedder, active: Callable[[], str | None], others: Sequence[Embedder] = ()):
        self.target = target
        self.dimension = target.dimension
        self._models = {m.version: m for m in others} | {target.version: target}
        self._active = active

    @property
    def version(self) -> str:
        active = self._active()
        return active if active in self._models else self.target.version

    def model(self, version: str) -> Embedder | None:
        return self._models.get(version)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._models[self.version].embed(texts)

    def embed_query(self, text: str) -> list[float]:
        active = self._active()
        if active is not None and active not in self._models:
            raise LookupError(f"the index serves vectors of model {active!r}, which this process cannot load")
        version = self.version
        return ModelVector(self._models[version].embed_query(text), version)

"""Embedder doubles for model changes: each `version` is its own vector space (a salted hash), so a
query embedded by one model finds nothing by another's vectors, as with two real models. Optionally
slow (a real model is compute-bound) and logging every text it embeds, to count what a run redid."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path


class HashEmbedder:
    def __init__(self, version: str, dimension: int = 16, delay: float = 0.0, log: str | None = None):
        self.version, self.dimension, self._delay = version, dimension, delay
        self._log = Path(log) if log else None
        self.embedded: list[str] = []

    def embed(self, texts):
        if self._delay:
            time.sleep(self._delay)
        self.embedded.extend(texts)
        if self._log is not None:
            with self._log.open("a") as f:
                f.write(json.dumps(list(texts)) + "\n")
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        raw = hashlib.sha256(f"{self.version}\n{text}".encode()).digest()
        raw += hashlib.sha256(raw).digest()
        v = [b - 127.5 for b in raw[: self.dimension]]
        norm = sum(x * x for x in v) ** 0.5
        return [x / norm for x in v]

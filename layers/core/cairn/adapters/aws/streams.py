"""Turns DynamoDB Streams records of the single table into search-index changes (the indexer Lambda).

Only memory items matter. A modification that leaves the memory's content record unchanged (an access
count bump from `record_access`) is skipped, so reading memories does not re-embed them; nor is a memory
embedded whose index entry already holds a vector of this model for its text (an import wrote the vector
it carried first). Within one batch the last change of a memory wins, so an insert followed by a delete
ends as a removal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from cairn.adapters.aws.dynamo_memories import MEMORY_SK, memory_from_image
from cairn.domain.models import IndexedMemory, Memory, vector_key


def _s(image: Mapping[str, Any], name: str) -> str | None:
    value = image.get(name)
    return value.get("S") if isinstance(value, Mapping) else None


def _n(image: Mapping[str, Any], name: str) -> float | None:
    value = image.get(name)
    return float(value["N"]) if isinstance(value, Mapping) and "N" in value else None


def _memory_key(keys: Mapping[str, Any]) -> tuple[str, str] | None:
    """(team id, memory id) from the item keys `<team>#M#<id>` / `M`; None for any other item."""
    pk, sk = _s(keys, "pk"), _s(keys, "sk")
    if sk != MEMORY_SK or not pk or "#M#" not in pk:
        return None
    team_id, _, memory_id = pk.rpartition("#M#")
    return team_id, memory_id


def changes_from_stream_records(
    records: Iterable[Mapping[str, Any]],
) -> tuple[list[Memory], list[tuple[str, str]]]:
    """(memories to upsert, (team id, memory id) pairs to remove) for a batch of stream records."""
    last: dict[tuple[str, str], Memory | None] = {}  # None means removed
    for record in records:
        change = record.get("dynamodb", {})
        key = _memory_key(change.get("Keys", {}))
        if key is None:
            continue
        event = record.get("eventName")
        if event == "REMOVE":
            last.pop(key, None)  # re-insert at the end: the latest change decides
            last[key] = None
            continue
        new, old = change.get("NewImage", {}), change.get("OldImage") or {}
        data = _s(new, "data")
        if data is None:  # KEYS_ONLY stream: nothing to index from
            continue
        if event == "MODIFY" and _s(old, "data") == data:
            continue
        last.pop(key, None)
        last[key] = memory_from_image(
            data, _n(new, "access_count"), _s(new, "last_accessed_at"), _s(new, "embedding_version")
        )
    upserts = [m for m in last.values() if m is not None]
    removals = [key for key, m in last.items() if m is None]
    return upserts, removals


class DynamoStreamIndexer:
    """Applies a batch of DynamoDB stream records to the search index (the indexer Lambda's work).

    Raises on a failed write so Lambda retries the batch: the index must not silently drift."""

    def __init__(self, indexer: Any, index: Any, mirror: Any = None) -> None:
        self._indexer = indexer  # cairn.services.indexing.MemoryIndexer
        self._index = index
        # cairn.services.distributed_reindex.BuildMirror: while a model-change build is on, every change
        # is written to the build as well
        self._mirror = mirror

    def apply(self, records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        upserts, removals = changes_from_stream_records(records)
        reused = self._reuse(upserts)
        fresh = [m for m in upserts if m.id not in reused]
        if fresh:
            self._indexer.index(fresh)
        if upserts and self._mirror is not None:
            self._mirror.index(upserts)  # the build's copy is embedded with its own model
        by_team: dict[str, list[str]] = {}
        for team_id, memory_id in removals:
            by_team.setdefault(team_id, []).append(memory_id)
        for team_id, ids in by_team.items():
            self._index.remove(team_id, ids)
            if self._mirror is not None:
                self._mirror.remove(team_id, ids)
        return {"indexed": len(upserts), "removed": len(removals), "reused": len(reused)}

    def _reuse(self, upserts: list[Memory]) -> set[str]:
        """Upsert, without embedding, the memories whose entry already holds a vector of this model for
        the same text (an import that carried it, a change that left the text alone); their ids."""
        stored = getattr(self._index, "stored_vectors", None)
        if stored is None or not upserts:
            return set()
        version = self._indexer.version
        vectors = stored(upserts, version)
        docs = [
            IndexedMemory(
                replace(m, embedding_version=version),
                tuple(vectors[m.id]),
                vector_key(version, m.search_text()),
            )
            for m in upserts
            if m.id in vectors
        ]
        self._indexer.write(docs)
        return {d.memory.id for d in docs}

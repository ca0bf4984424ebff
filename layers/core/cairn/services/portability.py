"""Export a team's memories, relations and sessions as JSON lines, and import them back.

Each line is `{"type": "memory"|"relation"|"session", "record": {...codec...}}`. Import keeps ids,
timestamps and history (superseded memories included) and rewrites `team_id` to the importing team, so
a store can move between an embedded install and a team server. Importing a record whose id exists
is skipped, which makes a re-run of an interrupted import safe.

Where the index keeps vectors (`VectorCache`, local mode), a memory line also carries its vector as
`"vector": {"model": <embedder version>, "f32": <base64 of float32>}`; an import with the same model
indexes it as it is instead of embedding the text again (a vector of another model is ignored and the
text embedded). Memories and their index entries are written in one unit, a chunk at a time. In AWS
the vectors come from OpenSearch (`StoredVectors`: an entry made by the model from the memory's current
text), and an import writes the carried ones to the index before the table, so the stream's indexer
reuses them instead of embedding again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from cairn.domain import codec
from cairn.domain.audit import AuditAction
from cairn.domain.details import check_details
from cairn.domain.errors import Conflict, Forbidden, InvalidInput
from cairn.domain.models import IndexedMemory, KeyScope, Memory, Principal, Relation, Session, vector_key
from cairn.domain.ports import (
    BulkMemoryWriter,
    BulkRelationWriter,
    MemoryRepository,
    RelationRepository,
    SessionRepository,
    StoredVectors,
    VectorCache,
)
from cairn.services.audit import AuditTrail
from cairn.services.memories import Indexer, require


@dataclass(frozen=True, slots=True)
class ImportReport:
    memories: int = 0
    relations: int = 0
    sessions: int = 0
    skipped: int = 0


class PortabilityService:
    def __init__(
        self,
        memories: MemoryRepository,
        relations: RelationRepository,
        sessions: SessionRepository,
        indexer: Indexer | None = None,
        unit: Callable[[], AbstractContextManager[Any]] | None = None,
        vectors: VectorCache | StoredVectors | None = None,
        model: str | None = None,  # the embedder's version, whose vectors travel with the memories
        audit: AuditTrail | None = None,
    ) -> None:
        self._audit = audit or AuditTrail()
        self._memories = memories
        self._relations = relations
        self._sessions = sessions
        self._indexer = indexer
        self._unit = unit or nullcontext
        self._vectors = vectors if model else None
        self._model = model
        # locally a memory and its index entries commit as one unit, so the entries follow the adds
        # (and skip a memory another import added meanwhile); without a unit (AWS) they go first
        self._index_after = unit is not None

    def export_lines(self, caller: Principal) -> Iterator[str]:
        """The team's sessions, memories and relations; for a key limited to projects, only those
        projects' (no team-global memory, no session of another project or of none)."""
        require(caller, KeyScope.ADMIN)
        self._audit.record(caller, AuditAction.EXPORT, caller.team_id)
        team = caller.team_id
        exported: set[str] = set()
        for s in self._sessions.iter_team(team):
            if not caller.reaches(s.project):
                continue
            yield json.dumps({"type": "session", "record": codec.encode_session(s)}, sort_keys=True)
        rows = (m for m in self._memories.iter_team(team) if caller.reaches(m.project))
        while chunk := list(islice(rows, _CHUNK)):
            known = self._known_vectors(chunk)
            for m in chunk:
                exported.add(m.id)
                line: dict[str, Any] = {"type": "memory", "record": codec.encode_memory(m)}
                vector = known.get(m.id)
                if vector is not None:
                    import numpy as np  # here, not at module top: off the authorizer's and hooks' cold start

                    raw = np.asarray(vector, dtype="<f4").tobytes()
                    line["vector"] = {"model": self._model, "f32": base64.b64encode(raw).decode()}
                yield json.dumps(line, sort_keys=True)
        for r in self._relations.iter_team(team):
            if caller.projects is not None and not {r.source_id, r.target_id} <= exported:
                continue
            yield json.dumps({"type": "relation", "record": codec.encode_relation(r)}, sort_keys=True)

    def import_lines(
        self, caller: Principal, lines: Iterable[str], progress: Callable[[int], None] | None = None
    ) -> ImportReport:
        """Every line is read and checked before the first is stored: a bad line imports nothing.
        `progress` is told how many records are done after each chunk (a staged import's status)."""
        require(caller, KeyScope.ADMIN)
        team = caller.team_id
        records: list[tuple[str, Memory | Relation | Session]] = []
        carried: dict[str, tuple[float, ...]] = {}  # memory id -> its vector, when of our model
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            kind, record, vector = _parse_line(line, n)
            record["team_id"] = team
            try:
                records.append((kind, _decode(kind, record)))
            except InvalidInput as exc:
                raise InvalidInput(f"line {n}: {exc.message}", **exc.details) from exc
            if vector is not None and vector.get("model") == self._model and self._model:
                carried[record["id"]] = _vector(vector, n)
        if caller.projects is not None:
            self._check_reach(caller, [obj for _, obj in records])
        counts = {"memory": 0, "relation": 0, "session": 0, "skipped": 0}
        memories = [obj for _, obj in records if isinstance(obj, Memory)]
        for start in range(0, len(memories), _CHUNK):
            added = self._import_memories(memories[start : start + _CHUNK], carried)
            counts["memory"] += added
            counts["skipped"] += min(_CHUNK, len(memories) - start) - added
            if progress is not None:
                progress(start + min(_CHUNK, len(memories) - start))
        others = [(kind, obj) for kind, obj in records if not isinstance(obj, Memory)]
        if isinstance(self._relations, BulkRelationWriter) and not self._index_after:
            relations = [obj for _, obj in others if isinstance(obj, Relation)]
            for start in range(0, len(relations), _CHUNK):
                chunk = relations[start : start + _CHUNK]
                added_ids = self._relations.add_new(chunk)
                counts["relation"] += len(added_ids)
                counts["skipped"] += len(chunk) - len(added_ids)
            others = [(kind, obj) for kind, obj in others if not isinstance(obj, Relation)]
        # without a unit (AWS) each is its own request: several at once; locally one after another
        with ThreadPoolExecutor(_WRITERS) as pool:
            stored = map(self._add_other, others) if self._index_after else pool.map(self._add_other, others)
            for (kind, _), added in zip(others, stored, strict=True):
                counts[kind if added else "skipped"] += 1
        if progress is not None:
            progress(len(records))
        self._audit.record(caller, AuditAction.IMPORT, team, details=counts)
        return ImportReport(counts["memory"], counts["relation"], counts["session"], counts["skipped"])

    def _add_other(self, item: tuple[str, Memory | Relation | Session]) -> bool:
        """Store a relation or session; False when one of that id is there already."""
        _, obj = item
        try:
            if isinstance(obj, Relation):
                self._relations.add(obj)
            elif isinstance(obj, Session):
                if self._sessions.get(obj.team_id, obj.id) is not None:
                    return False
                self._sessions.put(obj)
        except Conflict:
            return False
        return True

    def _check_reach(self, caller: Principal, records: list[Memory | Relation | Session]) -> None:
        """Forbidden, before anything is stored, when a key limited to projects imports a record of
        another project (or of none), or a relation to a memory outside its projects."""
        projects = {obj.id: obj.project for obj in records if isinstance(obj, Memory)}
        for obj in records:
            if isinstance(obj, (Memory, Session)):
                caller.check_project(obj.project)
        ends = {i for obj in records if isinstance(obj, Relation) for i in (obj.source_id, obj.target_id)}
        stored = self._memories.get_many(caller.team_id, sorted(ends - set(projects)))
        for end in ends:
            # one answer whether the memory is of another project or absent: nothing leaks
            known = end in projects or end in stored
            project = projects[end] if end in projects else stored[end].project if known else None
            if not known or not caller.reaches(project):
                raise Forbidden(f"a relation names memory {end}, outside this key's projects")

    def _import_memories(self, chunk: list[Memory], carried: dict[str, tuple[float, ...]]) -> int:
        """Add the chunk's new memories and index them in one unit; their embedding (of the ones that
        brought no vector of this model) happens before it. Returns how many were added."""
        stored = self._memories.get_many(chunk[0].team_id, [m.id for m in chunk]) if chunk else {}
        fresh = [m for m in chunk if m.id not in stored]
        docs: list[Any] = []
        if self._indexer:
            version = self._model or ""
            docs = [  # stamped with the model its vector is of: the index files it by that
                IndexedMemory(
                    replace(m, embedding_version=version or None),
                    carried[m.id],
                    vector_key(version, m.search_text()),
                )
                for m in fresh
                if m.id in carried
            ]
            docs += self._indexer.prepare([m for m in fresh if m.id not in carried])
        added: set[str] = set()
        with self._unit():
            if self._indexer and not self._index_after:
                # the index first: in AWS the table's stream then finds each carried vector already
                # indexed (same model, same text) and does not embed it again
                self._indexer.write(docs)
            if isinstance(self._memories, BulkMemoryWriter) and not self._index_after:
                self._memories.add_new(fresh)  # AWS: 25 a request; the ids were just found absent
                added.update(m.id for m in fresh)
            for m in fresh if not added else ():
                try:
                    self._memories.add(m)
                    added.add(m.id)
                except Conflict:
                    continue
            if self._indexer and self._index_after:
                self._indexer.write([d for d in docs if d.memory.id in added])
        return len(added)

    def _known_vectors(self, memories: list[Memory]) -> dict[str, list[float]]:
        if self._vectors is None or self._model is None:
            return {}
        if isinstance(self._vectors, StoredVectors):  # OpenSearch: by memory, checked against the text
            return self._vectors.stored_vectors(memories, self._model)
        keys = {m.id: vector_key(self._model, m.search_text()) for m in memories}
        found = self._vectors.cached_vectors(list(keys.values()))
        return {memory_id: found[key] for memory_id, key in keys.items() if key in found}


_CHUNK = 500
_WRITERS = 8  # concurrent requests of an import without a unit of work (DynamoDB)


def _vector(value: dict, n: int) -> tuple[float, ...]:
    import numpy as np  # here, not at module top: off the authorizer's and hooks' cold start

    try:
        raw = base64.b64decode(value["f32"], validate=True)
        vector = np.frombuffer(raw, dtype="<f4")
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"line {n} has a malformed vector") from exc
    if not len(vector) or not np.isfinite(vector).all():
        raise InvalidInput(f"line {n} has a malformed vector")
    return tuple(float(x) for x in vector)


def _decode(kind: str, record: dict) -> Memory | Relation | Session:
    if kind == "memory":
        memory = codec.decode_memory(record)
        check_details(memory.details)  # deeper details would break every read of the team
        return memory
    if kind == "relation":
        return codec.decode_relation(record)
    return codec.decode_session(record)


def _parse_line(line: str, n: int) -> tuple[str, dict, dict | None]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {n} is not valid JSON: {exc.msg}") from exc
    except RecursionError:
        raise InvalidInput(f"line {n} nests too deeply to be a Cairn record") from None
    if not isinstance(obj, dict) or obj.get("type") not in ("memory", "relation", "session"):
        raise InvalidInput(f"line {n} needs a type of memory, relation or session")
    record = obj.get("record")
    if not isinstance(record, dict):
        raise InvalidInput(f"line {n} needs a record object")
    vector = obj.get("vector")
    if vector is not None and not isinstance(vector, dict):
        raise InvalidInput(f"line {n} has a malformed vector")
    return obj["type"], record, vector

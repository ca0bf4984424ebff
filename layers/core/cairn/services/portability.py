"""Export a team's memories, relations and sessions as JSON lines, and import them back.

Each line is `{"type": "memory"|"relation"|"session", "record": {...codec...}}`. Import keeps ids,
timestamps and history (superseded memories included) and rewrites `team_id` to the importing team, so
a store can move between an embedded install and a team server. Importing a record whose id exists
is skipped, which makes a re-run of an interrupted import safe.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from cairn.domain import codec
from cairn.domain.details import check_details
from cairn.domain.errors import Conflict, InvalidInput
from cairn.domain.models import KeyScope, Memory, Principal, Relation, Session
from cairn.domain.ports import MemoryRepository, RelationRepository, SessionRepository
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
    ) -> None:
        self._memories = memories
        self._relations = relations
        self._sessions = sessions
        self._indexer = indexer

    def export_lines(self, caller: Principal) -> Iterator[str]:
        require(caller, KeyScope.ADMIN)
        team = caller.team_id
        for s in self._sessions.iter_team(team):
            yield json.dumps({"type": "session", "record": codec.encode_session(s)}, sort_keys=True)
        for m in self._memories.iter_team(team):
            yield json.dumps({"type": "memory", "record": codec.encode_memory(m)}, sort_keys=True)
        for r in self._relations.iter_team(team):
            yield json.dumps({"type": "relation", "record": codec.encode_relation(r)}, sort_keys=True)

    def import_lines(self, caller: Principal, lines: Iterable[str]) -> ImportReport:
        """Every line is read and checked before the first is stored: a bad line imports nothing."""
        require(caller, KeyScope.ADMIN)
        team = caller.team_id
        records: list[tuple[str, Memory | Relation | Session]] = []
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            kind, record = _parse_line(line, n)
            record["team_id"] = team
            try:
                records.append((kind, _decode(kind, record)))
            except InvalidInput as exc:
                raise InvalidInput(f"line {n}: {exc.message}", **exc.details) from exc
        counts = {"memory": 0, "relation": 0, "session": 0, "skipped": 0}
        imported: list[Memory] = []
        for kind, obj in records:
            try:
                if isinstance(obj, Memory):
                    self._memories.add(obj)
                    imported.append(obj)
                elif isinstance(obj, Relation):
                    self._relations.add(obj)
                else:
                    if self._sessions.get(team, obj.id) is not None:
                        raise Conflict("session exists")
                    self._sessions.put(obj)
            except Conflict:
                counts["skipped"] += 1
                continue
            counts[kind] += 1
        if imported and self._indexer:
            self._indexer.index([replace(m) for m in imported])
        return ImportReport(counts["memory"], counts["relation"], counts["session"], counts["skipped"])


def _decode(kind: str, record: dict) -> Memory | Relation | Session:
    if kind == "memory":
        memory = codec.decode_memory(record)
        check_details(memory.details)  # deeper details would break every read of the team
        return memory
    if kind == "relation":
        return codec.decode_relation(record)
    return codec.decode_session(record)


def _parse_line(line: str, n: int) -> tuple[str, dict]:
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
    return obj["type"], record

"""Redactable history: remove a string (a leaked secret, say) from everything the team's store keeps.

An admin names the string, and optionally a project. Every memory of the team (current and superseded
versions alike, transcript excerpts included) and every session record has it replaced by a mask, in any
field; each changed memory is indexed again (its text re-embedded, so no vector of the old text is
served); every blob under the team's (or project's) prefix, transcript parts and stage outputs alike, is
rewritten without it (gzip is opened, JSON escapes are matched too), and where the blob store keeps old
versions (S3) they are purged. A store that can compact (SQLite: the freed pages, the WAL, the full-text
index's merged segments) does so last, so the old bytes are gone from the file too. Exports read the
store, so every later export is clean. The redaction is recorded in the audit trail by its counts:
never the string.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from cairn.domain import codec
from cairn.domain.audit import AuditAction
from cairn.domain.errors import Forbidden, InvalidInput
from cairn.domain.models import KeyScope, Memory, Principal, Session, content_hash
from cairn.domain.ports import BlobStore, MemoryRepository, SessionRepository, VersionedBlobs
from cairn.services.audit import AuditTrail
from cairn.services.memories import Indexer, require
from cairn.services.uploads import project_slug

MASK = "[REDACTED]"
MIN_CHARS, MAX_CHARS = 4, 1000  # shorter would wipe ordinary words
_IDENTITY = frozenset({"id", "team_id", "superseded_by", "content_hash", "session_id", "transcript_key"})
_GZIP = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class RedactionReport:
    memories: int = 0
    sessions: int = 0
    blobs: int = 0
    old_versions: int = 0


class RedactionService:
    def __init__(
        self,
        memories: MemoryRepository,
        sessions: SessionRepository,
        blobs: BlobStore,
        indexer: Indexer | None,
        audit: AuditTrail,
        unit: Callable[[], AbstractContextManager[Any]] | None = None,
        compact: Callable[[], None] | None = None,
    ) -> None:
        self._memories = memories
        self._sessions = sessions
        self._blobs = blobs
        self._indexer = indexer
        self._audit = audit
        self._unit = unit or nullcontext
        self._compact = compact

    def redact(self, caller: Principal, needle: str, project: str | None = None) -> RedactionReport:
        require(caller, KeyScope.ADMIN)
        if not MIN_CHARS <= len(needle) <= MAX_CHARS or not needle.strip():
            raise InvalidInput(f"the string to redact must be {MIN_CHARS}-{MAX_CHARS} characters")
        project = project.strip() if project else None
        if project is None and caller.projects is not None:
            raise Forbidden("redacting the whole team needs an admin key for every project of the team")
        if project is not None:
            caller.check_project(project)
        forms = _forms(needle)
        memories = self._redact_memories(caller.team_id, forms, project)
        sessions = self._redact_sessions(caller.team_id, forms, project)
        blobs, old_versions = self._redact_blobs(caller.team_id, forms, project)
        if self._compact is not None:
            self._compact()
        report = RedactionReport(memories, sessions, blobs, old_versions)
        details = {"chars": len(needle), "memories": memories, "sessions": sessions, "blobs": blobs}
        self._audit.record(
            caller, AuditAction.REDACT, project or caller.team_id, project=project, details=details
        )
        return report

    def _redact_memories(self, team_id: str, forms: tuple[str, ...], project: str | None) -> int:
        changed: list[Memory] = []
        for memory in list(self._memories.iter_team(team_id)):
            if project is not None and memory.project != project:
                continue
            record = codec.encode_memory(memory)
            cleaned = _scrub(record, forms)
            if cleaned == record:
                continue
            redacted = codec.decode_memory(cleaned)
            changed.append(replace(redacted, content_hash=content_hash(redacted.kind, redacted.content)))
        for start in range(0, len(changed), 200):
            batch = changed[start : start + 200]
            docs = self._indexer.prepare(batch) if self._indexer else []  # re-embedded: no old vector
            with self._unit():
                for memory in batch:
                    self._memories.put(memory)
                if self._indexer:
                    self._indexer.write(docs)
        return len(changed)

    def _redact_sessions(self, team_id: str, forms: tuple[str, ...], project: str | None) -> int:
        def clean(session: Session | None) -> Session | None:
            if session is None:
                return None
            record = codec.encode_session(session)
            cleaned = _scrub(record, forms)
            return None if cleaned == record else codec.decode_session(cleaned)

        changed = 0
        for session in list(self._sessions.iter_team(team_id)):
            if project is None or session.project == project:
                # read-modify-write: a pipeline run updating the session meanwhile is not overwritten
                changed += self._sessions.update(team_id, session.id, clean) is not None
        return changed

    def _redact_blobs(self, team_id: str, forms: tuple[str, ...], project: str | None) -> tuple[int, int]:
        prefix = (
            f"teams/{team_id}/" if project is None else f"teams/{team_id}/projects/{project_slug(project)}/"
        )
        rewritten = purged = 0
        for key in self._blobs.list(prefix):
            data = self._blobs.get(key)
            cleaned = _scrub_blob(data, forms)
            if cleaned is None:
                continue
            gzipped = data.startswith(_GZIP)
            self._blobs.put(key, cleaned, "application/gzip" if gzipped else "application/json")
            rewritten += 1
            if isinstance(self._blobs, VersionedBlobs):
                purged += self._blobs.purge_history(key)
        return rewritten, purged


def _forms(needle: str) -> tuple[str, ...]:
    """The string as it may be stored: itself, and JSON-escaped (ASCII-only and not)."""
    escaped = {json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=False)[1:-1]}
    return tuple(sorted({needle, *escaped}, key=len, reverse=True))


def _scrub(value: Any, forms: tuple[str, ...], key: str | None = None) -> Any:
    if isinstance(value, str):
        if key in _IDENTITY:
            return value
        for form in forms:
            value = value.replace(form, MASK)
        return value
    if isinstance(value, Mapping):
        return {k: _scrub(v, forms, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, forms) for v in value]
    return value


def _scrub_blob(data: bytes, forms: tuple[str, ...]) -> bytes | None:
    """The blob without the string (gzip opened and closed again), or None when it never held it."""
    gzipped = data.startswith(_GZIP)
    raw = gzip.decompress(data) if gzipped else data
    cleaned = raw
    for form in forms:
        cleaned = cleaned.replace(form.encode(), MASK.encode())
    if cleaned == raw:
        return None
    return gzip.compress(cleaned, mtime=0) if gzipped else cleaned

"""What every stage gets: the ports and services it reads and writes through, the session's one reading,
and who it writes as."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel

from cairn.domain.errors import NotFound
from cairn.domain.models import KeyScope, Principal, Session, utcnow
from cairn.domain.ports import (
    BlobStore,
    Embedder,
    MemoryRepository,
    RelationRepository,
    SearchIndex,
    SessionRepository,
)
from cairn.pipeline.learning.extractor import Extractor
from cairn.pipeline.models import EventsDoc, SessionRef
from cairn.pipeline.reading.session import SessionReading, read_session
from cairn.services.memories import MemoryService


@dataclass
class PipelineDeps:
    blobs: BlobStore
    sessions: SessionRepository
    memories: MemoryService
    memory_repo: MemoryRepository
    relations: RelationRepository
    embedder: Embedder | None
    index: SearchIndex | None
    extractor: Extractor
    clock: Callable[[], datetime] = utcnow
    # the index embeds each write in this process through an embedder that keeps recent vectors
    # (local mode): a stage then embeds what it will write in one bulk call, on every core, and each
    # write finds its vector instead of embedding one text at a time
    warm_vectors: bool = False
    # the last session read (its events key, events and reading): consolidate and reflect run one
    # after the other on the same session and read it once between them
    _last_read: tuple[str, EventsDoc, SessionReading] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def session(self, ref: SessionRef) -> Session:
        session = self.sessions.get(ref.team_id, ref.session_id)
        if session is None:
            raise NotFound(f"no session {ref.session_id}")
        return session

    def read(self, key: str, model: type[BaseModel]):
        return model.model_validate_json(self.blobs.get(key))

    def reading(self, events_key: str) -> tuple[EventsDoc, SessionReading]:
        """A session's events (the parse stage's output) and its one reading."""
        last = self._last_read
        if last is not None and last[0] == events_key:
            return last[1], last[2]
        doc = self.read(events_key, EventsDoc)
        reading = read_session(doc)
        self._last_read = (events_key, doc, reading)
        return doc, reading

    def write(self, key: str, doc: BaseModel) -> None:
        self.blobs.put(key, doc.model_dump_json(exclude_none=True).encode(), "application/json")

    def fresh(self, ref: SessionRef, key: str) -> bool:
        """True when the stage must run: no earlier output, or a forced reprocess."""
        return ref.force or not self.blobs.exists(key)


def pipeline_principal(session: Session) -> Principal:
    """The pipeline writes on behalf of the member whose session it learns from."""
    return Principal(
        team_id=session.team_id,
        member=session.member or "cairn-pipeline",
        key_id="pipeline",
        scopes=frozenset({KeyScope.WRITE}),
    )

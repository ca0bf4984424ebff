"""Ports: what the services need from storage, search, blobs and models. Adapters implement them.

Every method that touches team data takes `team_id` first, and an adapter must never return or change
anything of another team, whatever the other arguments say. The contract suites in tests/contract hold
every adapter of a port to the same behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from cairn.domain.audit import AuditEntry
from cairn.domain.models import (
    ApiKey,
    Candidates,
    IndexedMemory,
    Memory,
    MemoryCount,
    MemoryFilter,
    Page,
    Relation,
    Session,
    Team,
)


@runtime_checkable
class MemoryRepository(Protocol):
    """Source of truth for memories."""

    def add(self, memory: Memory) -> None:
        """Store a new memory; raises Conflict if the id exists."""

    def put(self, memory: Memory) -> None:
        """Replace an existing memory (same id, same team); raises NotFound if absent."""

    def put_if_undelivered(self, memory: Memory) -> bool:
        """Replace a memory only while the stored copy has no `details["delivered_at"]`: one atomic
        compare-and-set, so of two sessions handing over the same handoff at once exactly one wins.
        False when it was delivered first (or is gone); nothing is written then."""

    def get(self, team_id: str, memory_id: str) -> Memory | None: ...

    def get_many(self, team_id: str, memory_ids: Sequence[str]) -> dict[str, Memory]: ...

    def delete(self, team_id: str, memory_id: str) -> bool:
        """Remove a memory and its relations; False if it did not exist."""

    def list(
        self, team_id: str, flt: MemoryFilter, limit: int = 50, cursor: str | None = None
    ) -> Page[Memory]:
        """Newest first (by created_at, then id); `cursor` continues a previous page.

        `limit` >= 1; a page may be shorter than `limit` before the end (filtered backends), and a
        malformed cursor raises InvalidInput."""

    def counts(self, team_id: str, flt: MemoryFilter) -> list[MemoryCount]:
        """How many memories `flt` admits, by project, scope and kind (the same memories `list` pages)."""
        ...

    def find_by_hash(self, team_id: str, project: str | None, content_hash: str) -> Memory | None:
        """A current memory with this hash in this project; with project None, a team-scope memory."""

    def record_access(self, team_id: str, memory_ids: Sequence[str], at: datetime) -> None:
        """Bump access_count and last_accessed_at; unknown ids are ignored."""

    def iter_team(self, team_id: str) -> Iterator[Memory]:
        """Every memory of the team, superseded ones included (export, reindex)."""


@runtime_checkable
class RelationRepository(Protocol):
    def add(self, relation: Relation) -> None: ...

    def get(self, team_id: str, relation_id: str) -> Relation | None: ...

    def delete(self, team_id: str, relation_id: str) -> bool: ...

    def for_memory(self, team_id: str, memory_id: str, direction: str = "both") -> list[Relation]:
        """Relations where the memory is the source ("out"), the target ("in"), or either ("both")."""

    def iter_team(self, team_id: str) -> Iterator[Relation]: ...


@runtime_checkable
class SessionRepository(Protocol):
    def put(self, session: Session) -> None:
        """Create or replace."""

    def get(self, team_id: str, session_id: str) -> Session | None: ...

    def update(
        self, team_id: str, session_id: str, change: Callable[[Session | None], Session | None]
    ) -> Session | None:
        """Read-modify-write as one step: `change` gets the stored session (None if absent) and returns
        what to store (None: store nothing). If another writer gets in between, `change` runs again on
        the newer session, so concurrent uploads and pipeline runs never lose each other's fields.
        Returns what was stored, or None."""

    def list(
        self, team_id: str, project: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> Page[Session]:
        """Most recently updated first."""

    def iter_team(self, team_id: str) -> Iterator[Session]: ...


@runtime_checkable
class TeamRepository(Protocol):
    """Teams and their members' API keys."""

    def add_team(self, team: Team) -> None:
        """Raises Conflict if the id exists."""

    def get_team(self, team_id: str) -> Team | None: ...

    def list_teams(self) -> list[Team]: ...

    def add_key(self, key: ApiKey) -> None:
        """Raises Conflict if the id exists."""

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        """Lookup by the stored hash (an exact index lookup, not a comparison of secrets)."""

    def get_key(self, team_id: str, key_id: str) -> ApiKey | None: ...

    def list_keys(self, team_id: str) -> list[ApiKey]: ...

    def put_key(self, key: ApiKey) -> None:
        """Replace (revocation, last_used_at); NotFound if absent or of another team."""

    def touch_key(self, key: ApiKey, used_at: datetime) -> bool:
        """Set the stored key's last_used_at, but only while the stored record still equals `key` (as it
        was read): a revocation that landed meanwhile is never overwritten. False when nothing was set."""


@runtime_checkable
class AuditLog(Protocol):
    """The audit trail: append-only entries of who changed what. Kept as long as the team's data (no
    expiry); an entry never holds a secret, so redaction leaves the trail as it is."""

    def record(self, entries: Sequence[AuditEntry]) -> None:
        """Append; an entry's id is unique, and recording the same entry twice keeps one."""

    def for_target(self, team_id: str, target: str, limit: int = 100) -> list[AuditEntry]:
        """The entries about one memory, key or project, newest first."""

    def list(self, team_id: str, limit: int = 50, cursor: str | None = None) -> Page[AuditEntry]:
        """The team's entries, newest first (by time, then id); `cursor` continues a page, a malformed
        one raises InvalidInput."""


@dataclass(frozen=True, slots=True)
class UploadTarget:
    """Where and how a client uploads a blob: S3 presigned POST fields, or the local equivalent."""

    url: str
    method: str  # "POST" (form fields + file) or "PUT"
    fields: dict[str, str]
    headers: dict[str, str]
    key: str
    max_bytes: int
    expires_at: datetime


@runtime_checkable
class BlobStore(Protocol):
    """Transcripts and intermediate pipeline data, by key `teams/<team>/...`."""

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Keys are relative (no leading '/', no '..', backslash or NUL: InvalidInput); the content
        type is a hint that a store may keep (S3) or drop (filesystem)."""

    def get(self, key: str) -> bytes:
        """Raises NotFound."""

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str) -> list[str]:
        """Keys starting with `prefix` as a plain string (as S3 does), sorted."""

    def delete(self, key: str) -> None: ...

    def presign_upload(
        self, key: str, max_bytes: int, content_type: str, expires_in_s: int
    ) -> UploadTarget: ...

    def presign_download(self, key: str, expires_in_s: int) -> str:
        """A URL that reads this one object, without the API key, for a short while."""

    def put_chunks(
        self, key: str, chunks: Iterable[bytes], content_type: str = "application/octet-stream"
    ) -> None:
        """One object written from chunks as they come (a large export), never held whole in memory;
        readers see it only once complete."""


class TransferLauncher(Protocol):
    """Starts the worker of a staged export or import (a Lambda invoked asynchronously, or a thread)."""

    def launch(self, team_id: str, transfer_id: str) -> None: ...


@runtime_checkable
class VersionedBlobs(Protocol):
    """A blob store that keeps earlier versions of an object (S3 with versioning): redaction purges them."""

    def purge_history(self, key: str) -> int:
        """Delete every version of `key` but the current one; returns how many."""


@runtime_checkable
class SearchIndex(Protocol):
    """A derived, rebuildable index over memories: BM25 leg and k-NN leg in one call."""

    def upsert(self, docs: Sequence[IndexedMemory]) -> None: ...

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None: ...

    def search(
        self,
        team_id: str,
        query_text: str,
        query_vector: Sequence[float] | None,
        flt: MemoryFilter,
        k_lexical: int,
        k_semantic: int,
    ) -> Candidates:
        """Both legs, each ranked best first, both already confined to team and filter."""

    def clear_team(self, team_id: str) -> None: ...


@runtime_checkable
class ToolTextSearch(Protocol):
    """A search index that also holds, apart from everything it ranks, what each transcript excerpt
    leaves out of its tools' outputs (`Memory.tool_text`): found by its words only when explicit recall
    asks for it, so it never competes with the memories and excerpts an answer ranks."""

    def search_tool_text(
        self, team_id: str, query_text: str, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        """(memory id, the engine's BM25 score) of the excerpts whose tool text matches the query's
        words, best first, confined to team and filter."""


@runtime_checkable
class Embedder(Protocol):
    version: str  # model + dimension; stored on memories to know when to re-embed
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """L2-normalised vectors, one per text."""

    def embed_query(self, text: str) -> list[float]: ...


@runtime_checkable
class AtomicSupersede(Protocol):
    """A memory repository whose store has no transaction spanning calls (DynamoDB) supersedes in one
    conditional write: the old memory is closed, the replacement and the `supersedes` relation stored,
    all or nothing, and only while the stored old memory is still the current copy that was read."""

    def supersede(self, closed: Memory, replacement: Memory, relation: Relation) -> None:
        """Raises Conflict when the old memory was superseded or changed meanwhile; nothing is written."""


@runtime_checkable
class VectorCache(Protocol):
    """Vectors already computed, by `vector_key`: an index that stores them can offer them back, so
    reindexing, the pipeline and imports never embed the same text with the same model twice."""

    def cached_vectors(self, keys: Sequence[str]) -> dict[str, list[float]]: ...


@runtime_checkable
class BulkMemoryWriter(Protocol):
    """A store that writes many new memories in few requests (DynamoDB's BatchWriteItem); an import
    uses it for memories it has just checked are absent."""

    def add_new(self, memories: Sequence[Memory]) -> None: ...


@runtime_checkable
class BulkRelationWriter(Protocol):
    """A store that adds many relations in few requests; returns the ids it added (those not stored)."""

    def add_new(self, relations: Sequence[Relation]) -> set[str]: ...


@runtime_checkable
class StoredVectors(Protocol):
    """An index that stores each memory's vector (both search indexes) and can give back those made with
    `model` from the memory's current search text: an export carries them, the stream's indexer does
    not embed again what an import already indexed, and consolidation decides a near duplicate by the
    exact cosine to them instead of by an approximate k-NN score."""

    def stored_vectors(self, memories: Sequence[Memory], model: str) -> dict[str, list[float]]: ...


@dataclass(frozen=True, slots=True)
class IndexDrift:
    """Where a team's search index disagrees with its memories."""

    missing: tuple[str, ...] = ()  # stored memories the index lacks
    orphaned: tuple[str, ...] = ()  # index entries of memories that no longer exist
    stale: tuple[str, ...] = ()  # index entries whose filter fields (current or not) are out of date

    @property
    def total(self) -> int:
        return len(self.missing) + len(self.orphaned) + len(self.stale)


@runtime_checkable
class IndexAudit(Protocol):
    def drift(self, team_id: str) -> IndexDrift: ...


@runtime_checkable
class ListableIndex(Protocol):
    """A search index that can say what it holds: each memory id of a team and whether it is indexed as
    current. Lets a rebuild happen in place (no blind window) and drift be found in any deployment."""

    def indexed(self, team_id: str) -> dict[str, bool]: ...


class Metrics(Protocol):
    """Business counters: what the service did for its teams (sessions learned, memories written, recall
    degraded, abstentions). In Lambda they become CloudWatch metrics (EMF); locally nothing records them."""

    def count(self, name: str, value: int = 1) -> None: ...


class NoMetrics:
    """`Metrics` that records nothing: local mode, and services built without metrics (tests)."""

    def count(self, name: str, value: int = 1) -> None:
        return None


class BusinessMetric:
    """The names `Metrics.count` is called with; the stack's alarms and dashboard read the same names."""

    SESSIONS_LEARNED = "SessionsLearned"
    MEMORIES_WRITTEN = "MemoriesWritten"
    RECALL_DEGRADED = "RecallDegraded"
    ABSTENTIONS = "Abstentions"


class TeamQuotas(Protocol):
    """Each team's own request quota at the edge (API Gateway usage plans in AWS; none locally)."""

    def provision(self, team_id: str, team_name: str) -> None:
        """Give the team its quota; idempotent (run again for teams made before quotas existed)."""


class NoTeamQuotas:
    """No per-team quota: local mode, one machine, whose server is its own limit."""

    def provision(self, team_id: str, team_name: str) -> None:
        return None


def usage_key(team_id: str) -> str:
    """The value of the team's API Gateway API key: the authorizer returns it as `usageIdentifierKey` and
    the usage plan meters and throttles by it. Not a secret: with the API key source AUTHORIZER, API
    Gateway takes it only from the authorizer's answer, never from a client; alphanumeric, 20+ chars."""
    return "cairnquota" + "".join(c for c in team_id if c.isalnum())


@dataclass(frozen=True, slots=True)
class PendingDoc:
    """An index entry that lacks the next model's vector: its memory, and which write of it (an entry
    rewritten since it was listed is not the one the vector was made for)."""

    memory_id: str
    rowid: int
    written: int


@dataclass(frozen=True, slots=True)
class BuildProgress:
    version: str
    batches: int  # batches committed so far (a resumed build keeps those a killed run committed)
    staged: int
    resumed: bool


@dataclass(frozen=True, slots=True)
class VersionCounts:
    active: str | None  # the model whose vectors k-NN searches
    building: str | None  # the model a reindex is building, until the swap
    docs: int
    served: int  # docs with a vector of `active`
    staged: int  # docs with a vector of `building` for their current write
    batches: int


@runtime_checkable
class VersionedIndex(Protocol):
    """An index that keeps each model's vectors apart: k-NN searches only the active model's, a model
    change builds the next model's beside them, and one swap makes them the served set."""

    def active_version(self) -> str | None: ...

    def begin_version(self, version: str) -> BuildProgress: ...

    def unstaged(self, team_id: str, version: str, limit: int, after: int = 0) -> list[PendingDoc]: ...

    def unstaged_count(self, version: str) -> int: ...

    def stage(self, version: str, entries: Sequence[tuple[PendingDoc, IndexedMemory]]) -> int: ...

    def swap(self, version: str) -> bool: ...

    def version_counts(self) -> VersionCounts: ...


@runtime_checkable
class EmbeddingStamps(Protocol):
    """A memory store that can stamp and count `embedding_version` in bulk (local: one UPDATE per team)."""

    def stamp_embedding_version(self, team_id: str, version: str) -> int: ...

    def embedding_versions(self, team_id: str) -> dict[str | None, int]: ...


class BuildTarget(SearchIndex, Protocol):
    """The index a model-change build writes to."""

    def create_missing(self, docs: Sequence[IndexedMemory]) -> None:
        """Write only documents the index lacks (what the stream indexer wrote meanwhile is newer)."""

    def indexed(self, team_id: str) -> dict[str, bool]: ...


@runtime_checkable
class IndexBuilds(Protocol):
    """A search index that builds a model's index beside the served one and swaps it in atomically
    (OpenSearch: versioned indexes behind an alias; `services.distributed_reindex`)."""

    def served_version(self) -> str | None: ...

    def building_version(self) -> str | None: ...

    def begin(self, version: str, dimension: int) -> str:
        """Create (or find again) the index of `version`; from now on writes go to it as well."""

    def building_version_cached(self) -> str | None:
        """`building_version` as last looked at, at most a few seconds old (asked on every stream batch)."""

    def writer(self, dimension: int) -> BuildTarget: ...

    def doc_count(self, name: str) -> int: ...

    def swap(self, version: str) -> bool:
        """Serve the built index of `version`; False when no build of that version is on."""

"""Composition root: the only module that reads settings and picks adapters (local or AWS).

`build_container(settings)` returns the services wired for the mode; the API, the CLI, the Lambda entry
points and the tests all get their services from here. Heavy objects (the ONNX embedder, SDK clients)
are created once per process and shared, because Lambda keeps the process warm between invocations.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import cache
from typing import Any

from cairn.domain.ports import BlobStore, Embedder, SessionRepository, TeamRepository
from cairn.services.keys import KeyService
from cairn.services.memories import MemoryService
from cairn.services.portability import PortabilityService
from cairn.services.reindex import ReindexService
from cairn.settings import Settings


@dataclass
class Container:
    settings: Settings
    memories: MemoryService
    recall: Any  # cairn.services.recall.RecallService
    keys: KeyService
    portability: PortabilityService
    sessions: SessionRepository
    teams: TeamRepository
    blobs: BlobStore
    embedder: Embedder
    reindex: ReindexService
    context: Any = None  # cairn.services.context.ContextService
    closers: tuple[Any, ...] = ()

    def close(self) -> None:
        for closer in self.closers:
            closer()


@cache
def shared_embedder() -> Embedder:
    from cairn.adapters.embedding import OnnxMiniLmEmbedder

    return OnnxMiniLmEmbedder()


def build_container(settings: Settings | None = None, embedder: Embedder | None = None) -> Container:
    settings = settings or Settings()
    if settings.mode == "aws":
        return _build_aws(settings, embedder or shared_embedder())
    return _build_local(settings, embedder or shared_embedder())


def _build_local(settings: Settings, embedder: Embedder) -> Container:
    from cairn.adapters.local.blobs import FilesystemBlobStore
    from cairn.adapters.local.db import SqliteDatabase
    from cairn.adapters.local.repositories import (
        SqliteMemoryRepository,
        SqliteRelationRepository,
        SqliteSessionRepository,
        SqliteTeamRepository,
    )
    from cairn.adapters.local.search import SqliteSearchIndex
    from cairn.services.context import ContextService
    from cairn.services.indexing import MemoryIndexer
    from cairn.services.recall import RecallService

    settings.home.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase(settings.db_path)
    memories = SqliteMemoryRepository(db)
    relations = SqliteRelationRepository(db)
    sessions = SqliteSessionRepository(db)
    teams = SqliteTeamRepository(db)
    index = SqliteSearchIndex(db)
    indexer = MemoryIndexer(index, embedder)
    blobs = FilesystemBlobStore(settings.blob_root, _local_signing_key(settings), settings.base_url)
    return Container(
        settings=settings,
        memories=MemoryService(memories, relations, indexer),
        recall=RecallService(memories, index, embedder, relations),
        keys=KeyService(teams),
        portability=PortabilityService(memories, relations, sessions, indexer),
        sessions=sessions,
        teams=teams,
        blobs=blobs,
        embedder=embedder,
        reindex=ReindexService(teams, memories, index, indexer),
        context=ContextService(memories, RecallService(memories, index, embedder, relations), sessions),
        closers=(db.close,),
    )


def _local_signing_key(settings: Settings) -> bytes:
    """Signs local upload URLs; made once per data dir and kept private to the user."""
    path = settings.home / "upload-signing.key"
    if not path.exists():
        path.write_bytes(secrets.token_bytes(32))
        path.chmod(0o600)
    return path.read_bytes()


def _build_aws(settings: Settings, embedder: Embedder) -> Container:
    raise NotImplementedError("aws mode is wired in cairn.bootstrap_aws")  # replaced when the adapters land

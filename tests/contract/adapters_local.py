"""Registers the local (embedded) adapters with the contract suites: SQLite repositories, filesystem blobs."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

from cairn.adapters.local.blobs import FilesystemBlobStore
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import sqlite_repositories
from cairn.adapters.local.sqlite_audit import SqliteAuditLog

from tests.contract.registry import Stores, provides


@provides("stores", "sqlite")
@contextmanager
def sqlite_stores():
    # a real file rather than :memory:, so WAL mode and the file-backed code paths are what is tested
    with tempfile.TemporaryDirectory() as tmp:
        db = SqliteDatabase(Path(tmp) / "cairn.db")
        try:
            repos = sqlite_repositories(db)
            yield Stores(
                memories=repos.memories, relations=repos.relations, sessions=repos.sessions, teams=repos.teams
            )
        finally:
            db.close()


@provides("audit_log", "sqlite")
@contextmanager
def sqlite_audit_log():
    with tempfile.TemporaryDirectory() as tmp:
        db = SqliteDatabase(Path(tmp) / "cairn.db")
        try:
            yield SqliteAuditLog(db)
        finally:
            db.close()


@provides("blob_store", "filesystem")
@contextmanager
def filesystem_blobs():
    with tempfile.TemporaryDirectory() as tmp:
        yield FilesystemBlobStore(Path(tmp), b"contract-test-signing-key", "http://127.0.0.1:8000")

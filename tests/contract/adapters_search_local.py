"""Registers the local search index (SQLite + in-memory BM25/k-NN views) with the search-index, vector-cache
and index-audit contract suites."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.index_audit import SqliteIndexAudit
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.adapters.local.search import SqliteSearchIndex

from tests.contract.registry import provides


@provides("search_index", "sqlite")
@contextmanager
def sqlite_search_index():
    # a file, not :memory:, so WAL mode and the generation check across connections are exercised
    with tempfile.TemporaryDirectory() as tmp:
        db = SqliteDatabase(Path(tmp) / "search.db")
        try:
            yield SqliteSearchIndex(db)
        finally:
            db.close()


@provides("vector_cache", "sqlite")
@contextmanager
def sqlite_vector_cache():
    with sqlite_search_index() as index:
        yield index  # the index keeps each vector under its key, and is the cache


@provides("index_audit", "sqlite")
@contextmanager
def sqlite_index_audit():
    """Yields (audit, memories repository, search index) over one file."""
    with tempfile.TemporaryDirectory() as tmp:
        db = SqliteDatabase(Path(tmp) / "audit.db")
        try:
            yield SqliteIndexAudit(db), SqliteMemoryRepository(db), SqliteSearchIndex(db)
        finally:
            db.close()

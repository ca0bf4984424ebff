"""Registers the local search index (SQLite FTS5 + numpy k-NN) with the search-index contract suite."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

from cairn.adapters.local.db import SqliteDatabase
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

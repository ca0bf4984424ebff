"""A store written before access statistics had their own columns opens and keeps its counts."""

import json
import sqlite3

import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.domain.codec import encode_memory
from cairn.domain.models import Memory, MemoryKind, utcnow

pytestmark = pytest.mark.integration

OLD_SCHEMA = """
CREATE TABLE memories (team_id TEXT NOT NULL, id TEXT NOT NULL, project TEXT, kind TEXT NOT NULL,
  scope TEXT NOT NULL, owner TEXT, session_id TEXT, content_hash TEXT NOT NULL, superseded_by TEXT,
  valid_to TEXT, created_us INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (team_id, id)) WITHOUT ROWID;
"""


def test_an_older_store_gets_the_access_columns_seeded_from_its_records(tmp_path):
    path = tmp_path / "old.db"
    seen = utcnow()
    m = Memory(
        id="mem_1",
        team_id="t",
        kind=MemoryKind.FACT,
        content="x",
        project="p",
        content_hash="h",
        access_count=7,
        last_accessed_at=seen,
    )
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute(
            "INSERT INTO memories VALUES"
            " ('t', 'mem_1', 'p', 'fact', 'project', NULL, NULL, 'h', NULL, NULL, 1, ?)",
            (json.dumps(encode_memory(m)),),
        )
    repo = SqliteMemoryRepository(SqliteDatabase(path))
    assert repo.get("t", "mem_1") == m
    repo.record_access("t", ["mem_1"], seen)
    assert repo.get("t", "mem_1").access_count == 8

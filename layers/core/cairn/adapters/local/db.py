"""One SQLite file in WAL mode, shared by the local repositories and the local search index.

A single connection guarded by a re-entrant lock: SQLite serialises writers anyway, and one connection
lets the FTS5 and vector tables commit atomically with the memories they index. Each adapter creates
its own tables with `ensure_schema` so the adapters stay independent of each other. Long reads (building
the search index's in-memory views: seconds at 100k records) take `snapshot()`, a second connection in a
read transaction, so they never hold the shared connection's lock while requests wait on it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SqliteDatabase:
    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            _create_private(Path(self.path))
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                # SQLite gives -wal and -shm the database file's mode; tighten ones an older run left
                for suffix in ("-wal", "-shm"):
                    _chmod_private(Path(self.path + suffix))
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA busy_timeout=5000")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A consistent read-only view of the whole file for a long read, on its own connection (WAL
        lets it read while the shared connection writes); an in-memory database has only the one."""
        if self.path == ":memory:":
            with self.read() as conn:
                own = not conn.in_transaction
                if own:
                    conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    if own:
                        conn.execute("COMMIT")
            return
        with self._reader_lock:
            if self._reader is None:
                self._reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                self._reader.execute("PRAGMA busy_timeout=5000")
            self._reader.execute("BEGIN")
            try:
                yield self._reader
            finally:
                self._reader.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception; nests as a savepoint."""
        with self._lock:
            if self._conn.in_transaction:
                self._conn.execute("SAVEPOINT nested")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK TO nested")
                    self._conn.execute("RELEASE nested")
                    raise
                self._conn.execute("RELEASE nested")
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def compact(self) -> None:
        """Rewrite the file without its free pages and empty the WAL, so the bytes of deleted or
        overwritten rows are gone from disk (after a redaction), not merely unreachable."""
        with self._lock:
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def ensure_schema(self, ddl: str) -> None:
        with self._lock:
            self._conn.executescript(ddl)

    def close(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            self._conn.close()


PRIVATE_FILE_MODE = 0o600  # memories and key hashes: readable by the user only


def _create_private(path: Path) -> None:
    """Create the database file 0600 before SQLite opens it, or tighten an existing one."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, PRIVATE_FILE_MODE)
    os.close(fd)
    _chmod_private(path)


def _chmod_private(path: Path) -> None:
    if path.exists() and (path.stat().st_mode & 0o777) != PRIVATE_FILE_MODE:
        path.chmod(PRIVATE_FILE_MODE)

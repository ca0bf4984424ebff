"""Embedded adapters: SQLite (WAL, FTS5, vectors as blobs) and a filesystem blob store."""

"""The embedded store is private to its user: cairn.db and its WAL/SHM files 0600, the blobs dir 0700."""

from __future__ import annotations

import os
import stat

import pytest
from cairn.adapters.local.blobs import FilesystemBlobStore
from cairn.adapters.local.db import SqliteDatabase
from cairn.bootstrap import build_container
from cairn.settings import Settings

pytestmark = [pytest.mark.integration]


@pytest.fixture
def permissive_umask():
    old = os.umask(0o022)  # a common default: without care new files would be world-readable
    yield
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_store_has_a_private_database_wal_shm_and_blob_dir(tmp_path, permissive_umask):
    settings = Settings(mode="local", home=tmp_path / "home")
    container = build_container(settings)
    try:
        container.keys.create_team("alpha", "admin")  # a write: the WAL and SHM files exist now
        db = settings.db_path
        assert mode(db) == 0o600
        for suffix in ("-wal", "-shm"):
            assert os.path.exists(f"{db}{suffix}")
            assert mode(f"{db}{suffix}") == 0o600, suffix
        assert mode(settings.blob_root) == 0o700
    finally:
        container.close()


def test_an_older_store_with_open_permissions_is_tightened_when_opened(tmp_path, permissive_umask):
    db_path = tmp_path / "cairn.db"
    SqliteDatabase(db_path).close()
    os.chmod(db_path, 0o644)
    blobs = tmp_path / "blobs"
    blobs.mkdir(mode=0o755)
    os.chmod(blobs, 0o755)  # noqa: S103 - the insecure state under test

    SqliteDatabase(db_path).close()
    FilesystemBlobStore(blobs, b"k" * 32, "http://127.0.0.1:8787")

    assert mode(db_path) == 0o600
    assert mode(blobs) == 0o700

"""The one atomic-write helper: a file is replaced whole or not at all, with the permissions asked for."""

from __future__ import annotations

import os
import stat

import pytest
from cairn.atomic import atomic_file, write_atomic

pytestmark = pytest.mark.unit


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "state.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_bytes_and_text_are_both_written_as_given(tmp_path):
    write_atomic(tmp_path / "b", b"\x00\xff")
    write_atomic(tmp_path / "t", "caf\u00e9", durable=True)
    assert (tmp_path / "b").read_bytes() == b"\x00\xff"
    assert (tmp_path / "t").read_bytes() == "caf\u00e9".encode()


def test_a_secret_file_gets_exactly_the_mode_asked_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "loose", "x", mode=0o644)
    finally:
        os.umask(old)
    write_atomic(tmp_path / "key", b"k", mode=0o600)
    assert _mode(tmp_path / "loose") == 0o644
    assert _mode(tmp_path / "key") == 0o600


def test_without_a_mode_the_file_is_created_as_a_plain_open_would(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "plain", "x")
        (tmp_path / "reference").write_text("x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "plain") == _mode(tmp_path / "reference") == 0o644


def test_a_failure_while_writing_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    target = tmp_path / "export.ndjson"
    target.write_text("complete old export\n")
    with pytest.raises(RuntimeError), atomic_file(target, durable=True) as sink:
        sink.write("half of a new ")
        raise RuntimeError("the server went away")
    assert target.read_text() == "complete old export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.ndjson"]


def test_the_temporary_file_may_live_in_another_folder_of_the_same_filesystem(tmp_path):
    staging = tmp_path / "tmp"
    staging.mkdir()
    write_atomic(tmp_path / "blob", b"data", tmp_dir=staging)
    assert (tmp_path / "blob").read_bytes() == b"data"
    assert list(staging.iterdir()) == []

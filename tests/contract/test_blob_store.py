"""Contract of BlobStore, run over every registered `blob_store` adapter.

Only the behaviour every backend shares: keys are relative slash-separated paths, `list` is a string
prefix match (as in S3), deleting a missing object is not an error. Filesystem-only rules (path escape
through symlinks, upload-token verification) are tested in tests/integration/test_filesystem_blobs.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cairn.domain.errors import InvalidInput, NotFound

pytestmark = pytest.mark.contract

SESSION = "teams/team-a/projects/proj-1/sessions/ses-1"


def test_a_blob_read_back_equals_the_bytes_stored(blob_store):
    data = bytes(range(256)) * 17
    blob_store.put(f"{SESSION}/transcript.jsonl", data, "application/x-ndjson")
    assert blob_store.get(f"{SESSION}/transcript.jsonl") == data


def test_an_empty_blob_round_trips(blob_store):
    blob_store.put(f"{SESSION}/empty", b"")
    assert blob_store.get(f"{SESSION}/empty") == b""
    assert blob_store.exists(f"{SESSION}/empty")


def test_putting_a_key_again_replaces_its_bytes(blob_store):
    key = f"{SESSION}/chunks/0.json"
    blob_store.put(key, b"first version, longer")
    blob_store.put(key, b"second")
    assert blob_store.get(key) == b"second"


def test_getting_a_missing_blob_raises_not_found(blob_store):
    with pytest.raises(NotFound):
        blob_store.get(f"{SESSION}/missing")


def test_exists_tells_whether_a_blob_is_stored(blob_store):
    blob_store.put(f"{SESSION}/a", b"x")
    assert blob_store.exists(f"{SESSION}/a")
    assert not blob_store.exists(f"{SESSION}/b")
    assert not blob_store.exists(SESSION)  # a prefix of a key is not itself a blob


def test_list_returns_every_key_under_a_prefix_sorted(blob_store):
    keys = [f"{SESSION}/chunks/1.json", f"{SESSION}/chunks/0.json", f"{SESSION}/transcript.jsonl"]
    for k in keys:
        blob_store.put(k, b"x")
    blob_store.put("teams/team-a/projects/proj-1/sessions/ses-2/transcript.jsonl", b"x")
    assert blob_store.list(f"{SESSION}/") == sorted(keys)
    assert blob_store.list(f"{SESSION}/chunks/") == sorted(keys[:2])
    assert blob_store.list("teams/team-a/projects/proj-1/sessions/ses-9/") == []


def test_list_matches_the_prefix_as_a_string_not_only_at_slashes(blob_store):
    blob_store.put(f"{SESSION}/chunks/10.json", b"x")
    blob_store.put(f"{SESSION}/chunks/11.json", b"x")
    blob_store.put(f"{SESSION}/chunks/2.json", b"x")
    assert blob_store.list(f"{SESSION}/chunks/1") == [
        f"{SESSION}/chunks/10.json",
        f"{SESSION}/chunks/11.json",
    ]
    assert blob_store.list("teams/team-a/projects/proj-1/sessions/ses-") == [
        f"{SESSION}/chunks/10.json",
        f"{SESSION}/chunks/11.json",
        f"{SESSION}/chunks/2.json",
    ]


def test_a_teams_prefix_lists_nothing_of_another_team(blob_store):
    blob_store.put("teams/team-a/projects/p/sessions/s/t.jsonl", b"a")
    blob_store.put("teams/team-ab/projects/p/sessions/s/t.jsonl", b"ab")
    assert blob_store.list("teams/team-a/") == ["teams/team-a/projects/p/sessions/s/t.jsonl"]


def test_deleting_a_blob_removes_it(blob_store):
    key = f"{SESSION}/chunks/0.json"
    blob_store.put(key, b"x")
    blob_store.put(f"{SESSION}/keep", b"y")
    blob_store.delete(key)
    assert not blob_store.exists(key)
    assert blob_store.list(f"{SESSION}/") == [f"{SESSION}/keep"]
    with pytest.raises(NotFound):
        blob_store.get(key)


def test_deleting_a_missing_blob_is_not_an_error(blob_store):
    blob_store.delete(f"{SESSION}/never-written")


BAD_KEYS = [
    pytest.param("", id="empty"),
    pytest.param("/teams/team-a/x", id="absolute"),
    pytest.param("teams/team-a/../team-b/x", id="dot-dot-segment"),
    pytest.param("../outside", id="leading-dot-dot"),
    pytest.param("teams\\team-a\\x", id="backslash"),
    pytest.param("teams/team-a/x\x00y", id="nul"),
]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_that_could_escape_its_prefix_is_invalid_input(blob_store, key):
    with pytest.raises(InvalidInput):
        blob_store.put(key, b"x")
    with pytest.raises(InvalidInput):
        blob_store.get(key)
    with pytest.raises(InvalidInput):
        blob_store.exists(key)
    with pytest.raises(InvalidInput):
        blob_store.delete(key)


@pytest.mark.parametrize("key", BAD_KEYS[1:])
def test_a_list_prefix_that_could_escape_is_invalid_input(blob_store, key):
    with pytest.raises(InvalidInput):
        blob_store.list(key)


def test_presign_upload_describes_where_and_how_to_upload(blob_store):
    key = f"{SESSION}/transcript.jsonl"
    before = datetime.now(UTC)
    target = blob_store.presign_upload(key, 5_000_000, "application/x-ndjson", 600)
    assert target.key == key
    assert target.max_bytes == 5_000_000
    assert target.method in ("PUT", "POST")
    assert target.url.startswith(("http://", "https://"))
    assert 500 <= (target.expires_at - before).total_seconds() <= 700


def test_presign_upload_refuses_an_invalid_key(blob_store):
    with pytest.raises(InvalidInput):
        blob_store.presign_upload("../escape", 100, "text/plain", 60)


def test_an_object_written_from_chunks_reads_back_whole(blob_store, monkeypatch):
    import cairn.adapters.aws.s3 as s3_adapter

    monkeypatch.setattr(s3_adapter, "PART_BYTES", 5 * 1024 * 1024)  # S3's smallest part: two parts here
    chunks = [bytes([n]) * (1024 * 1024) for n in range(7)]
    key = "teams/team-a/transfers/xfer-1/export.jsonl"
    blob_store.put_chunks(key, iter(chunks), "application/x-ndjson")
    assert blob_store.get(key) == b"".join(chunks)
    blob_store.put_chunks(key, iter([b"small"]))
    assert blob_store.get(key) == b"small"


def test_a_failed_chunked_write_leaves_no_object(blob_store):
    def failing():
        yield b"x" * 1024
        raise RuntimeError("the export broke")

    key = "teams/team-a/transfers/xfer-2/export.jsonl"
    with pytest.raises(RuntimeError):
        blob_store.put_chunks(key, failing())
    assert not blob_store.exists(key)


def test_presign_download_gives_a_link_that_reads_the_one_object(blob_store):
    key = "teams/team-a/transfers/xfer-3/export.jsonl"
    blob_store.put(key, b"{}\n")
    url = blob_store.presign_download(key, 60)
    assert url.startswith("http")
    verify = getattr(blob_store, "verify_download", None)  # the local token; S3 signs the key in the URL
    named = verify(url.rsplit("/", 1)[-1], datetime.now(UTC)) if verify else url.split("?")[0]
    assert named.endswith(key)

"""The filesystem blob store's own rules: where files land, path escapes, and signed upload tokens."""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cairn.adapters.local.blobs import FilesystemBlobStore, UploadGrant
from cairn.domain.errors import Forbidden, InvalidInput

pytestmark = pytest.mark.integration

KEY = "teams/team-a/projects/proj-1/sessions/ses-1/transcript.jsonl"
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> FilesystemBlobStore:
    return FilesystemBlobStore(
        tmp_path / "blobs", b"signing-key", "http://127.0.0.1:8000/", clock=lambda: NOW
    )


def token_of(url: str) -> str:
    prefix = "http://127.0.0.1:8000/v1/uploads/"
    assert url.startswith(prefix)
    return url.removeprefix(prefix)


@pytest.mark.parametrize("key", ["teams/a//b", "teams/./a", "teams/a/", "teams/a/."])
def test_keys_that_would_alias_another_key_are_invalid_input(store, key):
    with pytest.raises(InvalidInput):
        store.put(key, b"x")


def test_a_symlink_inside_the_store_cannot_lead_outside_it(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    (tmp_path / "blobs" / "objects" / "teams").mkdir(parents=True)
    os.symlink(outside, tmp_path / "blobs" / "objects" / "teams" / "evil")
    with pytest.raises(InvalidInput):
        store.get("teams/evil/secret")
    with pytest.raises(InvalidInput):
        store.put("teams/evil/planted", b"x")
    assert not (outside / "planted").exists()


def test_a_write_leaves_no_temporary_file_behind(store, tmp_path):
    store.put(KEY, b"one")
    store.put(KEY, b"two")
    assert list((tmp_path / "blobs" / "tmp").iterdir()) == []
    assert store.list("") == [KEY]


def test_deleting_the_last_blob_of_a_directory_prunes_the_empty_directories(store, tmp_path):
    store.put(KEY, b"x")
    store.delete(KEY)
    assert list((tmp_path / "blobs" / "objects").iterdir()) == []


def test_a_presigned_upload_is_a_put_to_the_uploads_route(store):
    target = store.presign_upload(KEY, 1024, "application/x-ndjson", 300)
    assert target.method == "PUT"
    assert target.headers == {"Content-Type": "application/x-ndjson"}
    assert target.fields == {}
    assert target.expires_at == NOW + timedelta(seconds=300)
    assert "/" not in token_of(target.url) and "=" not in token_of(target.url)


def test_a_valid_upload_token_grants_its_key_size_and_content_type(store):
    target = store.presign_upload(KEY, 1024, "application/x-ndjson", 300)
    grant = store.verify_upload(token_of(target.url), NOW + timedelta(seconds=299))
    assert grant == UploadGrant(key=KEY, max_bytes=1024, content_type="application/x-ndjson")


def test_an_expired_upload_token_is_forbidden(store):
    token = token_of(store.presign_upload(KEY, 1024, "text/plain", 300).url)
    with pytest.raises(Forbidden):
        store.verify_upload(token, NOW + timedelta(seconds=300))


def test_an_upload_token_with_a_tampered_payload_is_forbidden(store):
    token = token_of(store.presign_upload(KEY, 1024, "text/plain", 300).url)
    payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["m"] = 10**12  # try to raise the size limit
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    with pytest.raises(Forbidden):
        store.verify_upload(f"{forged}.{signature}", NOW)


def test_an_upload_token_with_a_tampered_signature_is_forbidden(store):
    token = token_of(store.presign_upload(KEY, 1024, "text/plain", 300).url)
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(Forbidden):
        store.verify_upload(flipped, NOW)


@pytest.mark.parametrize("token", ["", "no-dot", ".", "abc.def", "é.é"])
def test_a_malformed_upload_token_is_forbidden(store, token):
    with pytest.raises(Forbidden):
        store.verify_upload(token, NOW)


def test_an_upload_token_signed_with_another_key_is_forbidden(store, tmp_path):
    other = FilesystemBlobStore(tmp_path / "other", b"other-key", "http://127.0.0.1:8000", clock=lambda: NOW)
    token = token_of(other.presign_upload(KEY, 1024, "text/plain", 300).url)
    with pytest.raises(Forbidden):
        store.verify_upload(token, NOW)

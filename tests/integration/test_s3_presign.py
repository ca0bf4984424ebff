"""Presigned S3 uploads: the policy we sign, and an upload through it on a moto server.

moto accepts a POST without checking the policy (size, content type, signature, expiry), so the rules
are asserted on the signed policy itself, which is what S3 enforces.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from cairn.adapters.aws.presign_policy import decode_post_policy
from cairn.adapters.aws.s3 import MAX_PRESIGN_EXPIRY_S, S3BlobStore
from cairn.domain.errors import InvalidInput

from tests.contract.adapters_aws import aws_client, new_bucket

pytestmark = pytest.mark.integration

KEY = "teams/tm_a/projects/p1/sessions/ses_1/transcript.jsonl.gz"


@pytest.fixture
def s3():
    with new_bucket() as (store, bucket, client):
        yield store, bucket, client


def test_the_policy_pins_the_exact_key_under_the_team_prefix(s3):
    store, bucket, _ = s3
    target = store.presign_upload(KEY, 1000, "application/gzip", 300)
    policy = decode_post_policy(target.fields)
    assert policy.exact["key"] == KEY
    assert policy.exact["bucket"] == bucket
    assert policy.starts_with == {}  # no starts-with on the key: it cannot be moved out of the prefix
    assert target.fields["key"] == KEY and target.key == KEY


def test_the_policy_limits_the_size_from_one_byte_to_max_bytes(s3):
    store, _, _ = s3
    target = store.presign_upload(KEY, 5_000_000, "application/gzip", 300)
    assert decode_post_policy(target.fields).content_length_range == (1, 5_000_000)
    assert target.max_bytes == 5_000_000


def test_the_policy_requires_the_content_type_and_without_a_key_leaves_encryption_to_the_bucket(s3):
    store, _, _ = s3
    target = store.presign_upload(KEY, 1000, "application/gzip", 300)
    policy = decode_post_policy(target.fields)
    assert policy.exact["Content-Type"] == "application/gzip"
    assert target.fields["Content-Type"] == "application/gzip"
    # an explicit SSE-S3 (AES256) would override a bucket whose default is the stack's KMS key
    assert "x-amz-server-side-encryption" not in policy.exact
    assert "x-amz-server-side-encryption" not in target.fields


def test_a_kms_store_requires_its_key_in_the_policy():
    with new_bucket(kms_key_id="arn:aws:kms:us-east-1:123456789012:key/abc") as (store, _, _):
        policy = decode_post_policy(store.presign_upload(KEY, 10, "text/plain", 60).fields)
    assert policy.exact["x-amz-server-side-encryption"] == "aws:kms"
    assert policy.exact["x-amz-server-side-encryption-aws-kms-key-id"].endswith("key/abc")


def test_the_policy_expires_after_the_requested_seconds(s3):
    store, _, _ = s3
    before = datetime.now(UTC)
    target = store.presign_upload(KEY, 1000, "application/gzip", 300)
    expiration = decode_post_policy(target.fields).expiration
    assert 295 <= (expiration - before).total_seconds() <= 305
    assert abs((target.expires_at - expiration).total_seconds()) <= 2


def test_a_long_expiry_is_capped(s3):
    store, _, _ = s3
    before = datetime.now(UTC)
    expiration = decode_post_policy(store.presign_upload(KEY, 10, "text/plain", 86_400).fields).expiration
    assert (expiration - before).total_seconds() <= MAX_PRESIGN_EXPIRY_S + 5


@pytest.mark.parametrize(
    "key", ["teams/tm_a/${filename}", "teams/tm_a/", "teams/tm_a/../tm_b/x", "/teams/tm_a/x"]
)
def test_a_key_the_uploader_could_redirect_is_refused(s3, key):
    store, _, _ = s3
    with pytest.raises(InvalidInput):
        store.presign_upload(key, 10, "text/plain", 60)


def test_a_size_limit_below_one_byte_is_refused(s3):
    store, _, _ = s3
    with pytest.raises(InvalidInput):
        store.presign_upload(KEY, 0, "text/plain", 60)


def test_a_file_posted_to_the_presigned_target_is_stored_under_its_key(s3):
    store, _, _ = s3
    target = store.presign_upload(KEY, 1000, "application/gzip", 300)
    assert target.method == "POST"
    response = httpx.post(
        target.url,
        data=target.fields,
        files={"file": ("transcript.jsonl.gz", b"\x1f\x8bpayload", "application/gzip")},
        timeout=10,
    )
    assert response.status_code in (200, 201, 204), response.text
    assert store.get(KEY) == b"\x1f\x8bpayload"


def test_a_store_without_a_key_never_asks_for_sse_s3(s3):
    store, bucket, client = s3
    store.put(KEY, b"data", "application/gzip")
    head = client.head_object(Bucket=bucket, Key=KEY)
    assert head.get("ServerSideEncryption") != "AES256" or "ServerSideEncryption" not in head
    assert head["ContentType"] == "application/gzip"


def test_every_put_of_a_kms_store_is_encrypted_with_its_key():
    with new_bucket() as (_, bucket, client):
        key_arn = aws_client("kms").create_key()["KeyMetadata"]["Arn"]
        store = S3BlobStore(bucket, client=client, kms_key_id=key_arn)
        store.put(KEY, b"data", "application/gzip")
        head = client.head_object(Bucket=bucket, Key=KEY)
        assert store.get(KEY) == b"data"
    assert head["ServerSideEncryption"] == "aws:kms"
    assert head["SSEKMSKeyId"] == key_arn

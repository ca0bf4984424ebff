"""S3 adapter of the BlobStore port: transcripts and pipeline data under `teams/<team>/...`.

With a KMS key (the stack's, `CAIRN_KMS_KEY_ID`) every put asks for SSE-KMS under it, and so does every
presigned upload: the POST policy carries the SSE fields as conditions, so a client cannot drop them.
Without one nothing is sent and the bucket's default encryption applies (an explicit SSE-S3 request would
override a bucket whose default is the stack's key). The
policy also pins the exact object key (the service builds it under the caller's team prefix, so the
upload cannot land anywhere else), a size range and the content type; S3 enforces all of them, and
`presign_policy.decode_post_policy` lets tests read them back.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cairn.domain.blob_keys import check_key
from cairn.domain.errors import InvalidInput, NotFound
from cairn.domain.ports import UploadTarget

MAX_PRESIGN_EXPIRY_S = 3600  # presigned uploads are for a hook that uploads at once: keep them short
PART_BYTES = 8 * 1024 * 1024  # multipart parts (S3's minimum is 5 MiB, but for the last)
_MISSING = {"404", "NoSuchKey", "NotFound"}


class S3BlobStore:
    def __init__(self, bucket: str, client: Any = None, kms_key_id: str | None = None) -> None:
        if client is None:
            import boto3
            from botocore.config import Config

            # SigV4 for presigned URLs too: in us-east-1 boto3 would presign with SigV2, which S3 refuses
            # with a role's temporary credentials (and LocalStack refuses as well)
            client = boto3.client("s3", config=Config(signature_version="s3v4"))
        self._bucket = bucket
        self._s3 = client
        self._kms_key_id = kms_key_id

    def _sse(self) -> dict[str, str]:
        if self._kms_key_id:
            return {
                "x-amz-server-side-encryption": "aws:kms",
                "x-amz-server-side-encryption-aws-kms-key-id": self._kms_key_id,
            }
        return {}

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        check_key(key)
        extra: dict[str, str] = {}
        if self._kms_key_id:
            extra = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self._kms_key_id}
        self._s3.put_object(Bucket=self._bucket, Key=key, Body=data, ContentType=content_type, **extra)

    def get(self, key: str) -> bytes:
        check_key(key)
        try:
            return self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise NotFound("blob not found", key=key) from None
            raise

    def exists(self, key: str) -> bool:
        check_key(key)
        try:
            self._s3.head_object(Bucket=self._bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                return False
            raise
        return True

    def list(self, prefix: str) -> list[str]:
        check_key(prefix, prefix=True)
        keys: list[str] = []
        for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=self._bucket, Prefix=prefix):
            keys.extend(obj["Key"] for obj in page.get("Contents", []))
        return sorted(keys)

    def delete(self, key: str) -> None:
        check_key(key)
        self._s3.delete_object(Bucket=self._bucket, Key=key)

    def purge_history(self, key: str) -> int:
        """Delete every earlier version of `key` (the bucket is versioned): after a redaction rewrote an
        object, its old text must not stay readable as a noncurrent version. Returns how many."""
        check_key(key)
        old: list[dict[str, str]] = []
        for page in self._s3.get_paginator("list_object_versions").paginate(Bucket=self._bucket, Prefix=key):
            old += [
                {"Key": v["Key"], "VersionId": v["VersionId"]}
                for v in page.get("Versions", []) + page.get("DeleteMarkers", [])
                if v["Key"] == key and not v.get("IsLatest")
            ]
        for start in range(0, len(old), 1000):
            self._s3.delete_objects(
                Bucket=self._bucket, Delete={"Objects": old[start : start + 1000], "Quiet": True}
            )
        return len(old)

    def put_chunks(
        self, key: str, chunks: Iterable[bytes], content_type: str = "application/octet-stream"
    ) -> None:
        """A multipart upload of PART_BYTES parts (a single put when it all fits in one); an upload
        that fails is aborted, so no half object is ever visible."""
        check_key(key)
        buffer = bytearray()
        upload_id: str | None = None
        parts: list[dict[str, Any]] = []
        extra: dict[str, str] = {}
        if self._kms_key_id:
            extra = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self._kms_key_id}
        try:
            for chunk in chunks:
                buffer += chunk
                if len(buffer) < PART_BYTES:
                    continue
                if upload_id is None:
                    upload_id = self._s3.create_multipart_upload(
                        Bucket=self._bucket, Key=key, ContentType=content_type, **extra
                    )["UploadId"]
                parts.append(self._part(key, upload_id, len(parts) + 1, bytes(buffer)))
                buffer.clear()
            if upload_id is None:
                self.put(key, bytes(buffer), content_type)
                return
            if buffer:
                parts.append(self._part(key, upload_id, len(parts) + 1, bytes(buffer)))
            self._s3.complete_multipart_upload(
                Bucket=self._bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        except BaseException:
            if upload_id is not None:
                self._s3.abort_multipart_upload(Bucket=self._bucket, Key=key, UploadId=upload_id)
            raise

    def _part(self, key: str, upload_id: str, number: int, data: bytes) -> dict[str, Any]:
        etag = self._s3.upload_part(
            Bucket=self._bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data
        )["ETag"]
        return {"PartNumber": number, "ETag": etag}

    def presign_download(self, key: str, expires_in_s: int) -> str:
        """A GET of this one object, signed by the caller's role, valid at most MAX_PRESIGN_EXPIRY_S."""
        check_key(key)
        expires_in_s = max(1, min(expires_in_s, MAX_PRESIGN_EXPIRY_S))
        return self._s3.generate_presigned_url(
            "get_object", Params={"Bucket": self._bucket, "Key": key}, ExpiresIn=expires_in_s
        )

    def presign_upload(self, key: str, max_bytes: int, content_type: str, expires_in_s: int) -> UploadTarget:
        # `${filename}` in a key makes S3 substitute the uploader's file name (and boto3 then relaxes the
        # key condition to starts-with), which would let a client choose where its upload lands
        check_key(key)
        if "${filename}" in key:
            raise InvalidInput("upload key must be one exact object key", key=key)
        if max_bytes < 1:
            raise InvalidInput("max_bytes must be at least 1", max_bytes=max_bytes)
        expires_in_s = max(1, min(expires_in_s, MAX_PRESIGN_EXPIRY_S))
        sse = self._sse()
        fields = {"Content-Type": content_type, **sse}
        conditions: list[Any] = [
            ["content-length-range", 1, max_bytes],
            {"Content-Type": content_type},
            *({name: value} for name, value in sse.items()),
        ]
        post = self._s3.generate_presigned_post(
            Bucket=self._bucket, Key=key, Fields=fields, Conditions=conditions, ExpiresIn=expires_in_s
        )
        return UploadTarget(
            url=post["url"],
            method="POST",
            fields=dict(post["fields"]),
            headers={},
            key=key,
            max_bytes=max_bytes,
            expires_at=datetime.now(UTC) + timedelta(seconds=expires_in_s),
        )

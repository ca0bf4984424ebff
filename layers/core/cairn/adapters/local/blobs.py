"""The blob store on the local filesystem, with signed upload tokens standing in for S3 presigned URLs.

Objects live under `<root>/objects/<key>`; writes go to `<root>/tmp` and are renamed into place, so a
reader sees either the old object or the new one, never a partial file, and temp files never show up
as keys. An upload token is `<payload>.<signature>`, both URL-safe base64: the payload names the key,
size limit, content type and expiry, and the HMAC-SHA256 signature makes every one of them binding.
The HTTP route that receives the PUT calls `verify_upload` and then `put`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cairn.atomic import write_atomic
from cairn.domain.blob_keys import check_key
from cairn.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from cairn.domain.models import utcnow
from cairn.domain.ports import UploadTarget


@dataclass(frozen=True, slots=True)
class UploadGrant:
    """What a verified upload token allows: one object, at most `max_bytes`, of this content type."""

    key: str
    max_bytes: int
    content_type: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class FilesystemBlobStore:
    def __init__(
        self,
        root: Path,
        signing_key: bytes,
        public_base_url: str,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if not signing_key:
            raise ValueError("signing_key must not be empty")
        self._objects = Path(root) / "objects"
        self._tmp = Path(root) / "tmp"
        for folder in (Path(root), self._objects, self._tmp):
            # transcripts are private to the user: the root is 0700 (chmod also tightens an older
            # store), so whatever lies below stays out of other users' reach
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.chmod(0o700)
        self._real_objects = self._objects.resolve()
        self._signing_key = signing_key
        self._base_url = public_base_url.rstrip("/")
        self._clock = clock

    def _path(self, key: str) -> Path:
        check_key(key)
        path = self._objects / key
        # a symlink placed inside the root must not lead out of it either
        if not path.resolve().is_relative_to(self._real_objects):
            raise InvalidInput("blob key resolves outside the store", key=key)
        return path

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        # the content type is not kept: `get` returns bytes only, and the upload token carries it
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise Conflict("a blob key is a prefix of another blob key", key=key) from exc
        if path.is_dir():
            raise Conflict("a blob key is a prefix of another blob key", key=key)
        write_atomic(path, data, mode=0o600, durable=True, tmp_dir=self._tmp)

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise NotFound("blob not found", key=key) from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        """Every key that starts with `prefix` as a string (S3 semantics, not directory semantics)."""
        check_key(prefix, prefix=True)
        # walk only the deepest directory the prefix fully names
        base = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self._objects / base
        if not start.is_dir() or not start.resolve().is_relative_to(self._real_objects):
            return []
        keys = []
        for dirpath, _dirnames, filenames in os.walk(start):
            rel = Path(dirpath).relative_to(self._objects).as_posix()
            for name in filenames:
                key = name if rel == "." else f"{rel}/{name}"
                if key.startswith(prefix):
                    keys.append(key)
        return sorted(keys)

    def delete(self, key: str) -> None:
        path = self._path(key)
        try:
            path.unlink()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return  # deleting a missing object is not an error, as in S3
        # prune directories left empty, so listings and the tree stay tidy
        parent = path.parent
        while parent != self._objects:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent

    def presign_upload(self, key: str, max_bytes: int, content_type: str, expires_in_s: int) -> UploadTarget:
        check_key(key)
        if max_bytes < 1 or expires_in_s < 1:
            raise InvalidInput("max_bytes and expires_in_s must be positive")
        expiry = int(self._clock().timestamp()) + expires_in_s
        payload = _b64(
            json.dumps(
                {"k": key, "m": max_bytes, "c": content_type, "e": expiry}, separators=(",", ":")
            ).encode()
        )
        token = f"{payload}.{self._sign(payload)}"
        return UploadTarget(
            url=f"{self._base_url}/v1/uploads/{token}",
            method="PUT",
            fields={},
            headers={"Content-Type": content_type},
            key=key,
            max_bytes=max_bytes,
            expires_at=datetime.fromtimestamp(expiry, UTC),
        )

    def put_chunks(
        self, key: str, chunks: Iterable[bytes], content_type: str = "application/octet-stream"
    ) -> None:
        """Written to a temporary file, then renamed into place: readers never see a partial object."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=self._tmp)
        try:
            with os.fdopen(fd, "wb") as sink:
                for chunk in chunks:
                    sink.write(chunk)
                sink.flush()
                os.fsync(sink.fileno())
            os.chmod(tmp_name, 0o600)
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise

    def presign_download(self, key: str, expires_in_s: int) -> str:
        """A signed token for `GET /v1/downloads/{token}`: this one object, until it expires."""
        check_key(key)
        expiry = int(self._clock().timestamp()) + max(1, expires_in_s)
        payload = _b64(json.dumps({"p": "get", "k": key, "e": expiry}, separators=(",", ":")).encode())
        return f"{self._base_url}/v1/downloads/{payload}.{self._sign(payload)}"

    def verify_download(self, token: str, now: datetime) -> str:
        """The key a download token names; Forbidden if not signed by this store, altered, or expired."""
        payload, _, signature = token.partition(".")
        if not hmac.compare_digest(signature.encode(), self._sign(payload).encode()):
            raise Forbidden("download token signature is invalid")
        try:
            claims = json.loads(_unb64(payload))
            if claims.get("p") != "get":  # an upload token is not a download token
                raise KeyError("p")
            key, expiry = str(claims["k"]), datetime.fromtimestamp(int(claims["e"]), UTC)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise Forbidden("download token is malformed") from exc
        if now >= expiry:
            raise Forbidden("download token has expired", expired_at=expiry.isoformat())
        check_key(key)
        return key

    def path_of(self, key: str) -> Path:
        """Where an object lies (the download route streams it from there); NotFound if absent."""
        path = self._path(key)
        if not path.is_file():
            raise NotFound("blob not found", key=key)
        return path

    def verify_upload(self, token: str, now: datetime) -> UploadGrant:
        """The grant a token carries; Forbidden if it was not signed by this store, altered, or expired."""
        payload, _, signature = token.partition(".")
        if not hmac.compare_digest(signature.encode(), self._sign(payload).encode()):
            raise Forbidden("upload token signature is invalid")
        try:
            claims = json.loads(_unb64(payload))
            grant = UploadGrant(key=claims["k"], max_bytes=int(claims["m"]), content_type=claims["c"])
            expiry = datetime.fromtimestamp(int(claims["e"]), UTC)
        except (ValueError, TypeError, KeyError) as exc:  # signed by us, so only a format change gets here
            raise Forbidden("upload token is malformed") from exc
        if now >= expiry:
            raise Forbidden("upload token has expired", expired_at=expiry.isoformat())
        check_key(grant.key)
        return grant

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._signing_key, payload.encode(), hashlib.sha256).digest())

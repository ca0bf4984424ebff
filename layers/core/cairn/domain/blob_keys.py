"""The key rule every BlobStore enforces, whatever backs it.

Keys are relative, slash-separated paths. Anything that could name a file outside the filesystem
store's root, or two keys naming one object (`a//b`, `a/./b`), or escape a prefix check
(`teams/a/../b/`) is refused, so a key stays confined to the team prefix it names. S3 itself would
store such keys; refusing them everywhere keeps the two stores interchangeable.
"""

from __future__ import annotations

from cairn.domain.errors import InvalidInput


def check_key(key: str, *, prefix: bool = False) -> None:
    """InvalidInput for a key (with `prefix`: a list prefix, which may end with '/') breaking the rule."""
    if not isinstance(key, str):
        raise InvalidInput("blob key must be a string")
    if prefix and not key:
        return  # the empty prefix lists everything
    if not key:
        raise InvalidInput("blob key must not be empty")
    if "\x00" in key or "\\" in key or key.startswith("/"):
        raise InvalidInput("blob key must be a relative path without NUL or backslash", key=key)
    segments = key.split("/")
    if prefix and key.endswith("/"):
        segments.pop()
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidInput("blob key has an empty, '.' or '..' segment", key=key)

"""Identifiers: sortable by creation time, prefixed by what they name, safe in URLs and object keys."""

import re
import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_ID = re.compile(r"^[a-z]{2,8}_[0-9a-hjkmnp-tv-z]{26}$")


def _b32(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[n & 31])
        n >>= 5
    return "".join(reversed(out))


def new_id(prefix: str) -> str:
    """`<prefix>_` + 10 chars of milliseconds + 16 random chars (a ULID in lower-case base32)."""
    return f"{prefix}_{_b32(time.time_ns() // 1_000_000, 10)}{_b32(secrets.randbits(80), 16)}"


def is_valid_id(value: str, prefix: str | None = None) -> bool:
    if not _ID.match(value):
        return False
    return prefix is None or value.startswith(prefix + "_")

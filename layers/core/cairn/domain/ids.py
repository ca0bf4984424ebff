"""Identifiers: sortable by creation time, prefixed by what they name, safe in URLs and object keys.

Ids one process makes are monotonic (the ULID spec's monotonic variant): within one millisecond each
id is the last one's random part plus one, not a fresh draw. Ranking breaks exact ties by id, so with
fresh draws the order of two memories written in the same millisecond was a coin toss, and a re-ingest
of the same session could answer a question differently (coding_eval's flicker). Now ties go by order
of writing in a process; ids from different processes still only sort by their millisecond.
"""

import re
import secrets
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_ID = re.compile(r"^[a-z]{2,8}_[0-9a-hjkmnp-tv-z]{26}$")
_RANDOM_BITS = 80
_last = (0, 0)  # (millisecond, random part) of the last id this process made
_lock = threading.Lock()


def _b32(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[n & 31])
        n >>= 5
    return "".join(reversed(out))


def new_id(prefix: str) -> str:
    """`<prefix>_` + 10 chars of milliseconds + 16 random chars (a ULID in lower-case base32)."""
    global _last
    with _lock:
        ms, random = time.time_ns() // 1_000_000, secrets.randbits(_RANDOM_BITS)
        last_ms, last_random = _last
        if ms <= last_ms and last_random + 1 < 1 << _RANDOM_BITS:
            # the same millisecond (or a clock stepped back): one past the last, so ids keep their order
            ms, random = last_ms, last_random + 1
        _last = (ms, random)
    return f"{prefix}_{_b32(ms, 10)}{_b32(random, 16)}"


def is_valid_id(value: str, prefix: str | None = None) -> bool:
    if not _ID.match(value):
        return False
    return prefix is None or value.startswith(prefix + "_")

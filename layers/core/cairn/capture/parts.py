"""A whole session as the parts the stop hook sends: its main transcript, then each of its other files.

The hook cuts a session while it runs; `cairn ingest` and `cairn backfill` take one that has ended. Both
end up with the same parts: part 1 is the main transcript with the repository's manifests after it (as the
worker's first cut carries them), parts 2, 3, ... are the session's other files (Claude Code sub-agents,
Codex worker threads, OpenCode child sessions, continued parts), each redacted and gzipped by
`upload.prepare`, the hooks' one redaction path. Reading undoes the gzip or zstd a store may keep a
transcript in.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn import project_files
from cairn.capture.upload import PreparedPart, prepare

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class UnreadableTranscript(ValueError):
    """A file that looks compressed but cannot be decompressed."""


@dataclass(frozen=True, slots=True)
class SessionParts:
    parts: tuple[PreparedPart, ...]
    manifests: int  # repository files that rode along with part 1

    @property
    def redacted(self) -> int:
        return sum(sum(p.redactions.values()) for p in self.parts)


def read_whole(path: Path) -> bytes:
    """The transcript's plain bytes, whatever the store kept it as (.gz, .zst or plain)."""
    raw = path.read_bytes()
    try:
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        elif raw[:4] == ZSTD_MAGIC:
            import zstandard

            raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    except (OSError, EOFError, ValueError) as exc:  # zstandard.ZstdError is a ValueError
        raise UnreadableTranscript(f"{path} looks compressed but cannot be decompressed ({exc})") from None
    return raw


def session_parts(main: bytes, others: Sequence[bytes], cwd: str) -> SessionParts:
    """Part 1: the main transcript's whole lines plus the manifests of the repository at `cwd` (when it
    is here); then one part per other file. Secrets redacted in every one."""
    files = project_files.collect(cwd or "")
    lines = main if main.endswith(b"\n") or not main else main + b"\n"
    first = prepare(lines + project_files.to_jsonl(files))
    rest = tuple(prepare(data) for data in others if data.strip())
    return SessionParts((first, *rest), len(files))

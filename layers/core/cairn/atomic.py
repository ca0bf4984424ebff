"""Atomic file writes: the one way Cairn replaces a file, so readers see the old file or the new, not half.

The content goes to a temporary file beside the target (or in `tmp_dir`, which must be on the same
filesystem), is optionally flushed to disk, and is renamed over the target; a failure removes the
temporary file and leaves the target as it was. This module imports nothing from Cairn: any layer may
use it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_file(
    path: Path,
    *,
    mode: int | None = None,
    binary: bool = False,
    durable: bool = False,
    tmp_dir: Path | None = None,
) -> Iterator[IO[Any]]:
    """A file to write `path`'s new content to; it replaces `path` when the block ends without an error.

    `mode`: the file's permission bits exactly (0o600 for anything holding a secret); None creates it as
    a plain `open` would (0o666 less the umask). `durable`: fsync before the rename, for data that must
    survive a power cut (costs milliseconds, so the hooks' small state files do without)."""
    folder = tmp_dir or path.parent
    tmp = folder / f".{path.name[:200]}.{secrets.token_hex(4)}.tmp"  # within NAME_MAX
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as sink:
            if mode is not None:
                os.fchmod(sink.fileno(), mode)  # exactly `mode`, whatever the umask
            yield sink
            if durable:
                sink.flush()
                os.fsync(sink.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(
    path: Path,
    data: str | bytes,
    *,
    mode: int | None = None,
    durable: bool = False,
    tmp_dir: Path | None = None,
) -> None:
    """Replace `path` with `data` in one step (see `atomic_file`)."""
    with atomic_file(
        path, mode=mode, binary=isinstance(data, bytes), durable=durable, tmp_dir=tmp_dir
    ) as sink:
        sink.write(data)

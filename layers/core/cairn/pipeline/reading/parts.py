"""A session's transcript as one text: its stored parts inflated and joined, each part's first line kept."""

from __future__ import annotations

import zlib

from cairn.domain.errors import InvalidInput, PayloadTooLarge
from cairn.domain.ports import BlobStore
from cairn.pipeline.models import PartSpan
from cairn.transcripts.lines import MAX_TRANSCRIPT_BYTES


def join_parts(blobs: BlobStore, parts: list[str]) -> tuple[bytes, list[PartSpan]]:
    """Concatenate the decompressed parts; remember where each starts, for provenance line numbers.

    Parts are inflated a chunk at a time and never past what is left of MAX_TRANSCRIPT_BYTES, so a
    small upload that inflates to gigabytes (a gzip bomb) fails its session with a clear reason
    after holding at most the cap plus one chunk.
    """
    out = bytearray()
    spans = []
    line = 1
    for key in parts:
        raw = blobs.get(key)
        room = MAX_TRANSCRIPT_BYTES - len(out)
        if raw[:2] == GZIP_MAGIC:
            data = _gunzip_capped(raw, room, key)
        elif len(raw) > room:
            raise _too_large(key)
        else:
            data = raw
        if data and not data.endswith(b"\n"):
            data += b"\n"
        lines = data.count(b"\n")
        spans.append(PartSpan(key=key, first_line=line, lines=lines))
        line += lines
        out += data
    return bytes(out), spans


GZIP_MAGIC = b"\x1f\x8b"
INFLATE_CHUNK = 1024 * 1024  # output per decompress call: the most a part can overshoot the cap by


def _too_large(key: str) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"the session's transcript is larger than the {MAX_TRANSCRIPT_BYTES // (1024 * 1024)} MB "
        "the pipeline accepts once decompressed",
        key=key,
        limit_bytes=MAX_TRANSCRIPT_BYTES,
    )


def _gunzip_capped(raw: bytes, room: int, key: str, chunk: int = INFLATE_CHUNK) -> bytes:
    """Inflate every gzip member of `raw`, refusing as soon as the output passes `room` bytes."""
    out = bytearray()
    pending = raw
    try:
        while pending:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not inflater.eof:
                got = inflater.decompress(pending, chunk)  # max_length bounds this call's output
                out += got
                if len(out) > room:
                    raise _too_large(key)
                pending = inflater.unconsumed_tail
                if not pending and not got and not inflater.eof:
                    raise InvalidInput("a transcript part is not valid gzip: it is cut off", key=key)
            pending = inflater.unused_data  # concatenated members are legal gzip
    except zlib.error as exc:
        raise InvalidInput("a transcript part is not valid gzip", key=key) from exc
    return bytes(out)

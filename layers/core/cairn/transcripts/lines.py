"""Bytes in, JSON objects out: decompression with a size cap, then tolerant JSONL line reading.

Everything that can go wrong with an uploaded transcript below the level of "which agent wrote it"
is handled here: gzip/zstd wrapping, decompression bombs, oversized input, invalid UTF-8, blank
lines, lines that are not JSON, and a last line cut off mid-write. Nothing here raises for a bad
line; it is counted in `LineStats` and skipped. Some agents write a session as one (pretty-printed)
JSON document instead of JSON lines; `read_document` reads it, with the line each message starts on.
"""

from __future__ import annotations

import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import zstandard

from cairn.domain.errors import InvalidInput, PayloadTooLarge

# Decompressed cap. Real sessions are a few MB; 64 MB leaves room for huge tool outputs while
# keeping one parse inside a Lambda's memory.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_READ_BLOCK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Decoded:
    data: bytes
    compression: str  # "none" | "gzip" | "zstd"
    damaged: bool = False  # the compressed stream was corrupt or cut off; data is what came out of it


def _too_large(limit: int, when: str = "") -> PayloadTooLarge:
    size = f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"
    return PayloadTooLarge(
        f"transcript is larger than {size}{' ' + when if when else ''}; split or trim it before upload",
        limit_bytes=limit,
    )


def decompress(
    source: bytes | bytearray | memoryview | BinaryIO, *, limit: int = MAX_TRANSCRIPT_BYTES
) -> Decoded:
    """Return the transcript bytes, transparently un-gzipping or un-zstd-ing, never more than `limit`.

    Decompression is incremental and stops at `limit + 1` bytes of output, so a small bomb costs at
    most `limit` of memory before it is refused. A stream is read no further than needed.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)  # no copy when it already is bytes
        if not raw.startswith((GZIP_MAGIC, ZSTD_MAGIC)):
            if len(raw) > limit:
                raise _too_large(limit)
            return Decoded(raw, "none")
        stream: BinaryIO = io.BytesIO(raw)
    else:
        stream = source
    head = stream.read(4)
    if head.startswith(GZIP_MAGIC):
        return _gunzip(_blocks(head, stream), limit)
    if head.startswith(ZSTD_MAGIC):
        return _unzstd(_blocks(head, stream), limit)
    rest = stream.read(limit + 1 - len(head))
    if len(head) + len(rest) > limit:
        raise _too_large(limit)
    return Decoded(head + rest, "none")


def _blocks(head: bytes, stream: BinaryIO) -> Iterator[bytes]:
    yield head
    while block := stream.read(_READ_BLOCK):
        yield block


def _gunzip(chunks: Iterator[bytes], limit: int) -> Decoded:
    out = bytearray()
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False  # bytes of the current member were fed but its end was not seen yet
    try:
        for chunk in chunks:
            pending = chunk
            while pending:
                in_member = True
                # max_length bounds the output of this call: the bomb guard
                out += decomp.decompress(pending, limit + 1 - len(out))
                if len(out) > limit:
                    raise _too_large(limit, "after gzip decompression")
                pending = decomp.unconsumed_tail
                if decomp.eof:  # concatenated gzip members are legal; start the next one
                    pending = decomp.unused_data + pending
                    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    in_member = False
    except zlib.error:
        if not out:
            raise InvalidInput("transcript looks gzipped but the stream is corrupt") from None
        return Decoded(bytes(out), "gzip", damaged=True)
    if in_member and not out:
        raise InvalidInput("transcript looks gzipped but the stream is cut off before any data")
    # an upload cut off mid-member never reaches eof; keep what was recovered and say so
    return Decoded(bytes(out), "gzip", damaged=in_member)


# zstd output per input byte is unbounded in theory (RLE blocks): feed it small slices so a single
# call can produce at most a few MB before the size check runs
_ZSTD_SLICE = 256


def _unzstd(chunks: Iterator[bytes], limit: int) -> Decoded:
    out = bytearray()
    decomp = zstandard.ZstdDecompressor().decompressobj()
    in_frame = False
    try:
        for chunk in chunks:
            pending = memoryview(chunk)
            while pending:
                piece, pending = pending[:_ZSTD_SLICE], pending[_ZSTD_SLICE:]
                in_frame = True
                out += decomp.decompress(piece.tobytes())
                if len(out) > limit:
                    raise _too_large(limit, "after zstd decompression")
                if decomp.eof:  # several frames back to back (e.g. appended writes)
                    rest = decomp.unused_data
                    decomp = zstandard.ZstdDecompressor().decompressobj()
                    in_frame = False
                    if rest:
                        pending = memoryview(rest + pending.tobytes())
    except zstandard.ZstdError:
        if not out:
            raise InvalidInput("transcript looks zstd-compressed but the stream is corrupt") from None
        return Decoded(bytes(out), "zstd", damaged=True)
    if in_frame and not out:
        raise InvalidInput("transcript looks zstd-compressed but the stream is cut off before any data")
    return Decoded(bytes(out), "zstd", damaged=in_frame)


class LineStats:
    """Mutable tally kept while reading; parsers copy it into the frozen `ParseStats` at the end."""

    __slots__ = ("lines", "malformed", "truncated_tail", "invalid_utf8", "objects")

    def __init__(self) -> None:
        self.lines = 0
        self.malformed = 0
        self.objects = 0
        self.truncated_tail = False
        self.invalid_utf8 = False


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (1-based line number, line bytes, ended_with_newline) without splitting the whole buffer."""
    pos, line_no, size = 0, 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        line_no += 1
        if end == -1:
            yield line_no, data[pos:], False
            return
        yield line_no, data[pos:end], True
        pos = end + 1


def iter_json_objects(data: bytes, stats: LineStats) -> Iterator[tuple[int, dict]]:
    """Yield (line number, JSON object) for every well-formed line; tally everything else in `stats`."""
    for line_no, raw, terminated in iter_lines(data):
        stripped = raw.strip()
        if not stripped:
            continue
        stats.lines += 1
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError:
            text = stripped.decode("utf-8", "replace")
            stats.invalid_utf8 = True
        if line_no == 1:
            text = text.lstrip("\ufeff")
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            stats.malformed += 1
            if not terminated:
                stats.truncated_tail = True
            continue
        if not isinstance(obj, dict):
            stats.malformed += 1
            continue
        stats.objects += 1
        yield line_no, obj


@dataclass(frozen=True, slots=True)
class Document:
    """A transcript written as one JSON document spread over many lines, and what follows it."""

    obj: dict[str, Any]
    item_lines: tuple[int, ...]  # the 1-based line each element of its `messages` array starts on
    lines: int  # non-empty lines the document spans
    rest: bytes  # what follows the document (the project-file lines a capture may append)
    rest_line: int  # lines before `rest`, to number its lines as the whole file's


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def read_document(data: bytes, key: str = "messages") -> Document | None:
    """The JSON document `data` starts with when it is pretty-printed (its first line is a lone `{`);
    None for JSON lines, or when that document is not a JSON object. The elements of its `key` array
    are located as they are read, so every message keeps the line it came from."""
    head = data[:256].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.split(b"\n", 1)[0].strip() != b"{":  # a JSON-lines file starts with a whole object
        return None
    text = data.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    try:
        obj, offsets, end = _object(text, 0, key)
    except (ValueError, RecursionError, StopIteration):
        return None
    lines, line, last = [], 1, 0
    for offset in offsets:  # ascending: count the newlines between one element and the next
        line += text.count("\n", last, offset)
        lines.append(line)
        last = offset
    spanned = text[:end]
    return Document(
        obj=obj,
        item_lines=tuple(lines),
        lines=sum(1 for ln in spanned.splitlines() if ln.strip()),
        rest=text[end:].encode(),
        rest_line=spanned.count("\n"),
    )


def _object(text: str, i: int, key: str) -> tuple[dict[str, Any], list[int], int]:
    """Decode the object at `text[i]` member by member, noting where each element of `key` starts."""
    decode = _DECODER.raw_decode
    if not text.startswith("{", i):
        raise ValueError("not an object")
    obj: dict[str, Any] = {}
    offsets: list[int] = []
    i = _WS.match(text, i + 1).end()
    if text.startswith("}", i):
        return obj, offsets, i + 1
    while True:
        name, i = decode(text, i)
        i = _WS.match(text, i).end()
        if not isinstance(name, str) or not text.startswith(":", i):
            raise ValueError("not an object member")
        i = _WS.match(text, i + 1).end()
        if name == key and text.startswith("[", i):
            obj[name], offsets, i = _array(text, i)
        else:
            obj[name], i = decode(text, i)
        i = _WS.match(text, i).end()
        if text.startswith(",", i):
            i = _WS.match(text, i + 1).end()
        elif text.startswith("}", i):
            return obj, offsets, i + 1
        else:
            raise ValueError("expected , or }")


def _array(text: str, i: int) -> tuple[list[Any], list[int], int]:
    items: list[Any] = []
    offsets: list[int] = []
    i = _WS.match(text, i + 1).end()
    if text.startswith("]", i):
        return items, offsets, i + 1
    while True:
        offsets.append(i)
        item, i = _DECODER.raw_decode(text, i)
        items.append(item)
        i = _WS.match(text, i).end()
        if text.startswith(",", i):
            i = _WS.match(text, i + 1).end()
        elif text.startswith("]", i):
            return items, offsets, i + 1
        else:
            raise ValueError("expected , or ]")

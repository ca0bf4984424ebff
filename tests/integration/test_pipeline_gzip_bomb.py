"""A transcript part that inflates far past the cap (a gzip bomb) fails its session, holding only the cap."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest
from cairn.domain.errors import InvalidInput, PayloadTooLarge
from cairn.pipeline.reading.parts import _gunzip_capped, join_parts

from tests.integration.pipeline_helpers import claude_transcript, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/bombed"
MB = 1024 * 1024


def zeros_bomb(megabytes: int) -> bytes:
    """`megabytes` MB of zeros, gzipped (about 1/1000 of that), built without holding the plain bytes."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(MB)
    return b"".join(deflater.compress(block) for _ in range(megabytes)) + deflater.flush()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return zeros_bomb(200)


def test_an_uploaded_gzip_bomb_fails_its_session_with_a_clear_reason_and_nothing_else_is_lost(
    container, api, team_a, bomb
):
    good = claude_transcript("fine-1", [("user", "Let's use Redis for the job queue.")])
    assert learn(container, api, team_a.headers, raw=good, session_id="fine-1", project=PROJECT)[
        "status"
    ] == ("learned")

    session = learn(
        container, api, team_a.headers, raw=bomb, session_id="bomb-1", project=PROJECT, prepared=False
    )

    assert session["status"] == "failed"
    error = session["stats"]["error"]
    assert error["stage"] == "parse" and error["code"] == "payload_too_large"
    assert "larger than the 64 MB the pipeline accepts once decompressed" in error["message"]
    [key] = session["transcript_keys"]
    assert container.blobs.get(key) == bomb  # the upload is kept, as for any failed session
    other = api.get("/v1/sessions/fine-1", headers=team_a.headers).json()
    assert other["status"] == "learned"


def test_inflating_a_bomb_never_holds_more_than_the_cap_plus_a_few_chunks(bomb):
    room, chunk = 8 * MB, 1 * MB
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge):
            _gunzip_capped(bomb, room, "transcript-1", chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the output buffer (cap + one chunk, plus growth slack) and the chunk being appended; the whole
    # 200 MB is never there
    assert peak < room + 4 * chunk, peak


def test_parts_within_the_cap_are_joined_whole_including_concatenated_gzip_members():
    first = b'{"a": 1}\n'
    second = b'{"b": 2}'

    class Blobs:
        def get(self, key: str) -> bytes:
            return {"p1": gzip.compress(first) + gzip.compress(first), "p2": second}[key]

    data, spans = join_parts(Blobs(), ["p1", "p2"])  # type: ignore[arg-type]
    assert data == first + first + second + b"\n"
    assert [(s.key, s.first_line, s.lines) for s in spans] == [("p1", 1, 2), ("p2", 3, 1)]


@pytest.mark.parametrize("damage", [lambda z: z[: len(z) // 2], lambda z: z[:10] + b"garbage" + z[17:]])
def test_a_cut_off_or_corrupt_gzip_part_is_refused_as_not_valid_gzip(damage):
    part = damage(gzip.compress(b'{"a": 1}\n' * 1000))
    with pytest.raises(InvalidInput, match="not valid gzip"):
        _gunzip_capped(part, 64 * MB, "transcript-1")

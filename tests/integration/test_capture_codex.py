"""Codex capture: find the rollout when Stop gives no transcript path (plain, .zst); upload only new lines."""

from __future__ import annotations

import gzip
import io
import json

import pytest
import zstandard
from cairn.capture import worker
from cairn.capture.hook import run_hook

from tests.integration.pipeline_helpers import codex_rollout

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SID = "019c9999-aaaa-7bbb-8ccc-0123456789ab"


@pytest.fixture
def client_env(tmp_path, monkeypatch, server):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "client-home"))
    monkeypatch.setenv("CAIRN_URL", server.url)
    monkeypatch.setenv("CAIRN_API_KEY", server.key)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
    monkeypatch.setenv("CAIRN_CAPTURE_NO_WORKER", "1")  # the worker runs below, in this process
    return tmp_path


def _rollout_dir(tmp_path):
    folder = tmp_path / ".codex" / "sessions" / "2026" / "02" / "23"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _stop(payload: dict) -> None:
    assert run_hook("stop", "codex", io.BytesIO(json.dumps(payload).encode())) == 0
    worker.run()


STEPS = [
    ("user", "Let's use uv instead of pip for this repo."),
    ("shell", ("pytest -q", "FAILED tests/test_api.py::test_health - AssertionError: 500 != 200", 1)),
    ("shell", ("uv sync", "Resolved 12 packages", 0)),
    ("shell", ("pytest -q", "5 passed in 0.31s", 0)),
]


def _memories(server, session_id):
    from cairn.domain.models import KeyScope, MemoryFilter, Principal

    session = server.container.sessions.get(server.team_id, session_id)
    caller = Principal(server.team_id, "t", "k", frozenset({KeyScope.READ}))
    return session, list(server.container.memories.list(caller, MemoryFilter(project=session.project)).items)


def test_stop_with_an_empty_transcript_path_finds_the_sessions_rollout(client_env, server):
    work = client_env / "shop"
    work.mkdir()
    rollout = _rollout_dir(client_env) / f"rollout-2026-02-23T12-00-00-{SID}.jsonl"
    rollout.write_bytes(codex_rollout(SID, str(work), STEPS))
    (_rollout_dir(client_env) / "rollout-2026-02-23T11-00-00-other.jsonl").write_bytes(
        codex_rollout("other", str(work), [("user", "Let's use Redis for the queue.")])
    )
    _stop({"session_id": SID, "transcript_path": "", "cwd": str(work), "hook_event_name": "Stop"})
    assert server.container.runner.wait_idle(120)
    session, memories = _memories(server, SID)
    assert session.status == "learned" and session.agent == "codex"
    by_kind = {}
    for m in memories:
        by_kind.setdefault(m.kind.value, []).append(m)
    [decision] = by_kind["decision"]
    assert decision.content == "Let's use uv instead of pip for this repo."
    assert decision.details["alternatives"] == ["pip"]
    [episode] = [m for m in by_kind["episode"] if m.details.get("outcome") == "fixed"]
    assert "AssertionError: 500 != 200" in episode.content
    assert any(m.details.get("steps") == ["run `uv sync`", "pytest -q"] for m in by_kind["procedure"])
    assert not any("Redis" in m.content for m in memories)  # the other rollout was not uploaded


def test_a_zstd_rollout_is_found_by_working_directory_and_appended_lines_become_part_2(client_env, server):
    work = client_env / "shop-zst"
    work.mkdir()
    rollout = _rollout_dir(client_env) / f"rollout-2026-02-23T13-00-00-{SID}.jsonl.zst"
    first = codex_rollout(SID, str(work), STEPS[:1])
    rollout.write_bytes(zstandard.ZstdCompressor().compress(first))
    _stop({"session_id": "", "transcript_path": None, "cwd": str(work)})
    assert server.container.runner.wait_idle(120)

    more = codex_rollout(SID, str(work), STEPS)  # the same session, grown (same first lines)
    assert more.startswith(first)
    rollout.write_bytes(zstandard.ZstdCompressor().compress(more))
    _stop({"session_id": SID, "transcript_path": "", "cwd": str(work)})
    assert server.container.runner.wait_idle(120)

    session, memories = _memories(server, SID)
    assert session.status == "learned"
    assert [k.rsplit("/", 1)[1] for k in session.transcript_keys] == [
        "transcript-1.jsonl.gz",
        "transcript-2.jsonl.gz",
    ]
    part2 = gzip.decompress(server.container.blobs.get(session.transcript_keys[1]))
    assert part2 == more[len(first) :]  # only what was new
    assert (
        sum(m.kind.value == "decision" for m in memories) == 1
    )  # part 2 did not duplicate part 1's decision
    assert any(m.kind.value == "episode" for m in memories)

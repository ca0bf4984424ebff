"""kill -9 of `cairn serve` while it learns from a session loses nothing: every write it acknowledged is
still there, the search index matches the store before any start-up repair, and the session is learned
on the next start exactly as an uninterrupted run learns it (no duplicates, nothing missing), never
left `processing`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.integration.capture_helpers import hook_env
from tests.integration.pipeline_helpers import claude_transcript, upload
from tests.live import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]
LEARNED_KINDS = ("decision", "preference")
LIBS = ["postgres", "redis", "kafka", "nats", "sqlite", "duckdb", "mysql", "mongo", "etcd", "consul"]


def transcript(session_id: str, pairs: int = 120) -> bytes:
    """A long session whose every user turn states a decision or a preference: a few seconds of learning
    (real model), most of it writing memories one by one."""
    turns: list[tuple[str, object]] = []
    for i in range(pairs):
        turns += [
            (
                "user",
                f"We decided to use {LIBS[i % 10]}-{i} for ledger shard {i} because it keeps order {i * 7}.",
            ),
            ("assistant", [{"type": "text", "text": f"Noted shard {i}."}]),
            (
                "user",
                f"Please always run `make check-{i}` before pushing module_{i}; stub port {10000 + i}.",
            ),
            ("assistant", [{"type": "text", "text": "ok"}]),
        ]
    return claude_transcript(session_id, turns, cwd="/tmp")


class Server:
    """`cairn serve` in its own process, as a user runs it."""

    def __init__(self, home: Path, tmp: Path) -> None:
        self.home, self.port = home, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = hook_env(home, self.url, "unused")
        del self.env["CAIRN_URL"], self.env["CAIRN_API_KEY"]
        self.env["HOME"] = str(tmp / "user")
        self.log = tmp / "serve.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError(f"cairn serve did not answer: {self.log.read_text()}")

    def kill_9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill_9()

    def key(self) -> str:
        return tomllib.loads((self.home / "config.toml").read_text())["server"]["api_key"]

    def reindex_check(self) -> subprocess.CompletedProcess:
        """The CLI on the store as the crash left it (it repairs nothing with --check)."""
        return subprocess.run(
            [sys.executable, "-m", "cairn.cli.main", "reindex", "--check"],
            env={**self.env, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )


class Writer(threading.Thread):
    """Writes memories through the REST API the whole time; keeps the ids the server acknowledged (201)."""

    def __init__(self, server: Server, key: str) -> None:
        super().__init__(daemon=True)
        self.server, self.headers = server, {"Authorization": f"Bearer {key}"}
        self.acknowledged: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.done.is_set():
            body = {
                "kind": "fact",
                "content": f"acknowledged write {i} port {20000 + i}",
                "project": "crash/w",
            }
            try:
                resp = httpx.post(
                    f"{self.server.url}/v1/memories", json=body, headers=self.headers, timeout=10
                )
            except httpx.HTTPError:  # the server is down (killed, restarting): not acknowledged
                time.sleep(0.05)
                continue
            if resp.status_code == 201:
                self.acknowledged.append(resp.json()["id"])
            i += 1
            time.sleep(0.02)


def _session(api: httpx.Client, session_id: str) -> dict:
    resp = api.get(f"/v1/sessions/{session_id}")
    assert resp.status_code == 200, resp.text
    return resp.json()


def _of_session(api: httpx.Client, session_id: str) -> list[dict]:
    resp = api.get("/v1/memories", params={"session_id": session_id, "limit": 500})
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]


def _learned_memories(api: httpx.Client, session_id: str) -> list[dict]:
    return [m for m in _of_session(api, session_id) if m["kind"] in LEARNED_KINDS]


def _until(what, timeout: float = 180.0, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := what()) is not None:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what.__doc__}")


def _wait_learned(api: httpx.Client, session_id: str) -> dict:
    def learned():
        """the session to be learned"""
        s = _session(api, session_id)
        assert s["status"] != "failed", s["stats"].get("error")
        return s if s["status"] == "learned" else None

    return _until(learned, every=0.25)


def test_kill_9_while_learning_loses_no_write_and_the_session_is_learned_after_restart(tmp_path):
    home = tmp_path / "home"
    server = Server(home, tmp_path)
    server.start()
    key = server.key()
    writer = Writer(server, key)
    writer.start()
    api = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    try:
        upload(api, {}, raw=transcript("crashed"), session_id="crashed", project="crash/p")

        def parsing():
            """the run to start, before it writes any memory"""
            return True if _session(api, "crashed")["status"] == "processing" else None

        def writing():
            """the run to be writing memories"""
            return True if len(_learned_memories(api, "crashed")) >= 20 else None

        for cut_at in (parsing, writing):  # once in the early stages, once among the memory writes
            _until(cut_at)
            server.kill_9()
            checked = server.reindex_check()  # before the restart mends anything
            assert checked.returncode == 0, checked.stdout + checked.stderr
            assert "agree" in checked.stdout
            server.start()
            assert "Resuming learning from 1 session(s)" in server.log.read_text()

        crashed = _wait_learned(api, "crashed")
        writer.done.set()
        writer.join(30)

        # the same session learned without interruption, for comparison
        upload(api, {}, raw=transcript("uninterrupted"), session_id="uninterrupted", project="crash/q")
        _wait_learned(api, "uninterrupted")
        after_crash = _learned_memories(api, "crashed")
        clean = _learned_memories(api, "uninterrupted")
        assert Counter((m["kind"], m["content"]) for m in after_crash) == Counter(
            (m["kind"], m["content"]) for m in clean
        )
        # excerpts, the reflection and the handoff too: once each, as in the uninterrupted run
        kinds = Counter(m["kind"] for m in _of_session(api, "crashed"))
        assert kinds == Counter(m["kind"] for m in _of_session(api, "uninterrupted"))
        assert kinds["handoff"] == 1 and kinds["reflection"] == 1 and kinds["excerpt"] > 0
        uninterrupted = _session(api, "uninterrupted")["stats"]
        assert crashed["stats"]["parse"] == uninterrupted["parse"]
        # what the session learned is reported as the uninterrupted run reports it (not as merges)
        counts = ("created", "merged", "superseded")
        assert {c: crashed["stats"]["consolidate"][c] for c in counts} == {
            c: uninterrupted["consolidate"][c] for c in counts
        }

        assert len(writer.acknowledged) > 10
        for memory_id in writer.acknowledged:
            assert api.get(f"/v1/memories/{memory_id}").status_code == 200, memory_id
        some = writer.acknowledged[len(writer.acknowledged) // 2]
        content = api.get(f"/v1/memories/{some}").json()["content"]
        hits = api.post("/v1/search", json={"query": content, "project": "crash/w", "limit": 5}).json()
        assert some in [h["memory"]["id"] for h in hits["hits"]]
    finally:
        writer.done.set()
        api.close()
        server.stop()
    checked = server.reindex_check()
    assert checked.returncode == 0 and "agree" in checked.stdout, checked.stdout + checked.stderr

"""The stop hook as a process: it returns at once, exit 0, silent, even with the server down; nothing is lost.

The hook only records the request and starts a detached worker; the worker cuts the new lines into a
redacted, gzipped part and keeps it on disk until the server takes it. The next hook call (here: once
the server is up) delivers the queued part and its own new one.
"""

from __future__ import annotations

import time

import pytest

from tests.integration.capture_helpers import (
    closed_port_url,
    hook_env,
    outbox,
    run_hook,
    wait_for_worker,
)
from tests.integration.pipeline_helpers import bash_turns, claude_transcript

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SESSION = "cap-1"


def test_stop_hook_with_server_down_then_up_delivers_everything(tmp_path, server):
    home = tmp_path / "client-home"
    transcript = tmp_path / "session.jsonl"
    first = [
        ("user", "Let's go with FastAPI for the HTTP layer."),
        *bash_turns("pytest -q", "12 passed in 0.5s", call_id="t1"),
    ]
    transcript.write_bytes(claude_transcript(SESSION, first, cwd=str(tmp_path)))
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
    }

    down = hook_env(home, closed_port_url(), server.key)
    proc, _ = run_hook("stop", payload, down)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    wait_for_worker(home)
    assert outbox(home) == ["claude-code__cap-1__000001.json"]  # queued on disk, not lost

    # the session goes on; the server comes up; the next stop delivers part 1 and the new part 2
    second = [
        *first,
        ("user", "Please always run the tests with -q."),
        *bash_turns("pytest -q tests/unit", "3 passed", call_id="t2"),
    ]
    transcript.write_bytes(claude_transcript(SESSION, second, cwd=str(tmp_path)))
    proc, _ = run_hook("stop", payload, hook_env(home, server.url, server.key))
    assert proc.returncode == 0 and proc.stdout == b""
    wait_for_worker(home)
    assert outbox(home) == []
    assert server.container.runner.wait_idle(120)

    session = server.container.sessions.get(server.team_id, SESSION)
    assert [k.rsplit("/", 1)[1] for k in session.transcript_keys] == [
        "transcript-1.jsonl.gz",
        "transcript-2.jsonl.gz",
    ]
    assert session.status == "learned", session.stats
    contents = {
        m.content
        for m in server.container.memories.list(_caller(server.team_id), _flt(session.project)).items
    }
    assert "Let's go with FastAPI for the HTTP layer." in contents
    assert "Please always run the tests with -q." in contents


def test_a_hook_with_garbage_on_stdin_still_exits_0_silently(tmp_path):
    import subprocess
    import sys

    env = hook_env(tmp_path / "home", closed_port_url(), "nokey", CAIRN_CAPTURE_NO_WORKER="1")
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.capture.hook", "stop"],
        input=b"\x00not json{",
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_stop_without_new_lines_uploads_nothing_new(tmp_path, server):
    home = tmp_path / "client-home"
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(claude_transcript("cap-2", [("user", "Let's use Redis for caching.")]))
    payload = {"session_id": "cap-2", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    env = hook_env(home, server.url, server.key)
    for _ in range(2):
        run_hook("stop", payload, env)
        wait_for_worker(home)
    # a half-written last line waits for the next call too
    with transcript.open("ab") as f:
        f.write(b'{"type":"user","partial')
    run_hook("session-end", payload, env)
    wait_for_worker(home)
    assert server.container.runner.wait_idle(60)
    session = server.container.sessions.get(server.team_id, "cap-2")
    assert len(session.transcript_keys) == 1


def _caller(team_id):
    from cairn.domain.models import KeyScope, Principal

    return Principal(team_id, "t", "k", frozenset({KeyScope.READ}))


def _flt(project):
    from cairn.domain.models import MemoryFilter

    return MemoryFilter(project=project)


def test_the_session_start_drain_delivers_what_an_earlier_stop_queued(tmp_path, server, monkeypatch):
    from cairn.capture import queue

    home = tmp_path / "client-home"
    transcript = tmp_path / "q.jsonl"
    transcript.write_bytes(claude_transcript("cap-3", [("user", "Let's use Postgres for reporting.")]))
    payload = {"session_id": "cap-3", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    run_hook("stop", payload, hook_env(home, closed_port_url(), server.key))
    wait_for_worker(home)
    assert len(outbox(home)) == 1

    monkeypatch.setenv("CAIRN_HOME", str(home))
    monkeypatch.setenv("CAIRN_URL", server.url)
    monkeypatch.setenv("CAIRN_API_KEY", server.key)
    assert queue.drain_in_background() is True  # what the session-start hook calls: detached, returns at once
    deadline = time.monotonic() + 60
    while outbox(home) and time.monotonic() < deadline:  # the detached worker needs a moment to start
        time.sleep(0.05)
    wait_for_worker(home)
    assert outbox(home) == []
    assert queue.drain_in_background() is False  # nothing left to do: no process started
    assert server.container.runner.wait_idle(60)
    assert server.container.sessions.get(server.team_id, "cap-3").status == "learned"


def test_the_cli_form_of_the_hook_also_exits_0_silently(tmp_path):
    import subprocess
    import sys

    env = hook_env(tmp_path / "home", closed_port_url(), "k", CAIRN_CAPTURE_NO_WORKER="1")
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "hook", "stop", "--agent", "codex"],
        input=b'{"session_id": "x", "transcript_path": ""}',
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert len(list((tmp_path / "home" / "capture" / "requests").glob("*.json"))) == 1


def test_a_sub_agents_transcript_is_uploaded_and_learned_as_part_of_its_session(tmp_path, server):
    home = tmp_path / "client-home"
    transcript = tmp_path / "cap-3.jsonl"
    transcript.write_bytes(claude_transcript("cap-3", [("user", "Find where retries are configured.")]))
    sub = tmp_path / "cap-3" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub_lines = claude_transcript(
        "cap-3",
        [
            ("user", "Search the repo for the retry settings"),
            ("assistant", [{"type": "text", "text": "Retries live in config/retry_policy.toml (max 5)."}]),
        ],
    )
    sub.write_bytes(sub_lines.replace(b'"isSidechain": false', b'"isSidechain": true'))
    payload = {"session_id": "cap-3", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    run_hook("stop", payload, hook_env(home, server.url, server.key))
    wait_for_worker(home)
    assert server.container.runner.wait_idle(120)

    session = server.container.sessions.get(server.team_id, "cap-3")
    assert [k.rsplit("/", 1)[1] for k in session.transcript_keys] == [
        "transcript-1.jsonl.gz",
        "transcript-2.jsonl.gz",
    ]
    assert session.status == "learned", session.stats
    texts = [
        m.content
        for m in server.container.memories.list(_caller(server.team_id), _flt(session.project)).items
    ]
    assert any("config/retry_policy.toml" in t for t in texts)

    # a second stop with nothing new in either file uploads nothing
    run_hook("stop", payload, hook_env(home, server.url, server.key))
    wait_for_worker(home)
    assert len(server.container.sessions.get(server.team_id, "cap-3").transcript_keys) == 2


def test_the_repositorys_manifests_go_with_the_session_once_and_again_when_they_change(tmp_path, server):
    import gzip

    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / "package.json").write_text('{\n  "scripts": {\n    "test": "vitest run"\n  }\n}\n')
    home = tmp_path / "client-home"
    transcript = tmp_path / "m.jsonl"
    turns = [("user", "Add a cart page.")]
    transcript.write_bytes(claude_transcript("cap-4", turns, cwd=str(repo)))
    payload = {"session_id": "cap-4", "transcript_path": str(transcript), "cwd": str(repo)}
    down = hook_env(home, closed_port_url(), server.key)
    spool = home / "capture" / "spool" / "outbox"

    def stop(*more):
        turns.extend(more)
        transcript.write_bytes(claude_transcript("cap-4", turns, cwd=str(repo)))
        run_hook("stop", payload, down)
        wait_for_worker(home)
        return gzip.decompress(sorted(spool.glob("*.gz"))[-1].read_bytes())

    assert b'"cairn.project_file"' in stop()
    assert b"cairn.project_file" not in stop(("user", "Now the checkout."))  # unchanged: not sent again
    (repo / "package.json").write_text('{\n  "scripts": {\n    "test": "vitest run --coverage"\n  }\n}\n')
    assert b"vitest run --coverage" in stop(("user", "And the receipts."))

    run_hook("stop", payload, hook_env(home, server.url, server.key))
    wait_for_worker(home)
    assert server.container.runner.wait_idle(120)
    session = server.container.sessions.get(server.team_id, "cap-4")
    assert session.status == "learned", session.stats
    facts = [
        m.content
        for m in server.container.memories.list(_caller(server.team_id), _flt(session.project)).items
        if m.kind == "fact"
    ]
    assert facts == ["Scripts declared in package.json:\n- test: `vitest run --coverage`"]

"""`cairn ingest --wait`, `cairn sessions`, `cairn reprocess` as processes against a real served store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.integration.capture_helpers import hook_env
from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, claude_transcript

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def cairn(env, *args, timeout=300):
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", *args],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_ingest_wait_prints_what_was_learned_then_sessions_and_reprocess(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    code, out = cairn(env, "ingest", str(CLAUDE_FIXTURE), "--project", "github.com/demo/todo", "--wait")
    assert code == 0, out
    assert (
        "uploaded session fe5e1c67-53e7-4862-81ae-d0e013e3270b (claude-code, project github.com/demo/todo)"
        in out
    )
    assert "http://localhost:3001" in out and "TS2307" in out

    code, out = cairn(env, "sessions")
    assert code == 0 and "fe5e1c67-53e7-4862-81ae-d0e013e3270b" in out and "learned" in out

    code, out = cairn(env, "reprocess", "fe5e1c67-53e7-4862-81ae-d0e013e3270b", "--force", "--wait")
    assert code == 0, out
    assert "queued" in out


def test_ingest_of_a_malformed_file_is_refused_before_anything_is_uploaded(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    bad = tmp_path / "broken.jsonl"
    bad.write_text("definitely not json\n")
    code, out = cairn(env, "ingest", str(bad), "--project", "p", "--session", "broken-1", "--wait")
    assert code == 1
    assert "not a transcript: no line is a JSON object" in out and "nothing was uploaded" in out
    assert server.container.sessions.get(server.team_id, "broken-1") is None


def test_ingest_detects_agent_and_session_from_the_file(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    path = tmp_path / "s.jsonl"
    path.write_bytes(claude_transcript("detected-1", [("user", "Let's use Redis for the job queue.")]))
    code, out = cairn(env, "ingest", str(path), "--project", "p", "--wait")
    assert code == 0, out
    assert "uploaded session detected-1 (claude-code" in out and "Redis" in out


def test_ingest_of_a_session_folder_brings_its_sub_agents_transcripts(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    (tmp_path / "sub-1.jsonl").write_bytes(claude_transcript("sub-1", [("user", "Find the retry settings.")]))
    agent = tmp_path / "sub-1" / "subagents" / "agent-a1.jsonl"
    agent.parent.mkdir(parents=True)
    turns = [("user", "Search for retries"), ("assistant", "Retries live in config/retry_policy.toml")]
    agent.write_bytes(
        claude_transcript("sub-1", turns).replace(b'"isSidechain": false', b'"isSidechain": true')
    )
    code, out = cairn(env, "ingest", str(tmp_path / "sub-1"), "--project", "p", "--wait")
    assert code == 0, out
    assert "uploaded session sub-1 (claude-code, project p) with 1 sub-agent transcript(s)" in out
    session = server.container.sessions.get(server.team_id, "sub-1")
    assert len(session.transcript_keys) == 2 and session.status == "learned"


def test_ingest_brings_the_manifests_of_the_repository_the_session_ran_in(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / "Makefile").write_text("test:\n\tgo test ./...\n")
    path = tmp_path / "m.jsonl"
    path.write_bytes(claude_transcript("man-1", [("user", "Add a cart page.")], cwd=str(repo)))
    code, out = cairn(env, "ingest", str(path), "--project", "p", "--wait")
    assert code == 0, out
    assert "uploaded session man-1 (claude-code, project p), 1 project file(s)" in out
    assert "Targets declared in Makefile" in out


def test_reprocess_of_an_unknown_session_fails_clearly(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    code, out = cairn(env, "reprocess", "nope")
    assert code == 1 and "no session nope" in out


def test_ingest_takes_a_sessions_other_files_after_its_transcript_and_learns_them_as_one_session(
    tmp_path, server
):
    from tests.agent_stores import HOME

    rollouts = sorted((HOME / ".codex" / "sessions" / "2026" / "06" / "25").glob("rollout-*.jsonl"))
    main, worker = rollouts  # agentv's session, then the worker thread it spawned
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    code, out = cairn(env, "ingest", str(main), str(worker), "--project", "p", "--wait")
    assert code == 0, out
    assert "uploaded session 019efc87-fa98-7971-91df-0c9512a065da (codex, project p)" in out
    assert "and 1 other file(s) of the session" in out
    session = server.container.sessions.get(server.team_id, "019efc87-fa98-7971-91df-0c9512a065da")
    assert len(session.transcript_keys) == 2 and session.status == "learned"
    assert server.container.sessions.get(server.team_id, "019c8a70-dda7-7f33-98ea-f30553347322") is None


def test_ingest_refuses_another_agents_file_as_part_of_a_session_before_anything_is_uploaded(
    tmp_path, server
):
    from tests.agent_stores import HOME

    main = next((HOME / ".codex" / "sessions" / "2026" / "06" / "25").glob("rollout-*.jsonl"))
    gemini = next((HOME / ".gemini" / "tmp" / "shop" / "chats").glob("session-*.jsonl"))
    env = hook_env(tmp_path / "cli-home", server.url, server.key)
    code, out = cairn(env, "ingest", str(main), str(gemini), "--project", "p")
    assert code == 1 and "nothing was uploaded" in out, out
    assert server.container.sessions.get(server.team_id, "019efc87-fa98-7971-91df-0c9512a065da") is None

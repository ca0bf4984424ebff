"""Copilot CLI's hooks as it runs them, fed the exact payloads Copilot CLI 1.0.102 sent (tests/events/hooks).

The context hooks print `{"additionalContext": ...}` for sessionStart and userPromptSubmitted; agentStop
uploads the transcript it names, and sessionEnd, which names none, finds `session-state/<id>/events.jsonl`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
from cairn.capture.hook import detect_agent as capture_agent
from cairn.cli.hooks_context import detect_agent as context_agent
from cairn.domain.models import KeyScope, MemoryFilter, MemoryKind, Principal
from cairn.services.memories import NewMemory

from tests.integration.capture_helpers import hook_env, run_hook, wait_for_worker
from tests.paths import TRANSCRIPTS

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EVENTS = Path(__file__).resolve().parents[1] / "events" / "hooks"
CAPTURE = TRANSCRIPTS / "copilot-cli" / "cairn-capture" / "events-800b4105.jsonl"
SID = "800b4105-97fb-4654-81ff-9c0cd2e8bcb5"
PROJECT = "github.com/acme/shop"


def payload(event: str, **fields) -> dict:
    return json.loads((EVENTS / f"copilot_cli_{event}.json").read_text()) | fields


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "shop"
    path.mkdir()
    (path / ".cairn.toml").write_text(f'project = "{PROJECT}"\n')
    return path


def test_copilots_payloads_are_recognised_by_both_hooks():
    for event in ("sessionStart", "userPromptSubmitted", "agentStop", "sessionEnd"):
        assert context_agent(payload(event), environ={}) == "copilot-cli"
        assert capture_agent(payload(event)) == "copilot-cli"


def test_session_start_and_prompt_hooks_print_copilots_additional_context(tmp_path, server, repo):
    principal = Principal(server.team_id, "t", "k", frozenset({KeyScope.WRITE, KeyScope.READ}))
    server.container.memories.remember(
        principal,
        NewMemory(kind=MemoryKind.DECISION, content="The store stays in SQLite WAL mode", project=PROJECT),
    )
    home = tmp_path / "cairn-home"
    home.mkdir()
    (home / "config.toml").write_text(tomli_w.dumps({"server": {"url": server.url, "api_key": server.key}}))
    env = hook_env(home, server.url, server.key, CAIRN_HOOK_NO_DRAIN="1")
    for event, name in (("sessionStart", "session-start"), ("userPromptSubmitted", "user-prompt")):
        proc = subprocess.run(
            [sys.executable, "-m", "cairn.cli.hooks_context", name, "--agent", "copilot-cli"],
            input=json.dumps(payload(event, cwd=str(repo))).encode(),
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        out = json.loads(proc.stdout)
        assert list(out) == ["additionalContext"], event
        assert "SQLite WAL mode" in out["additionalContext"], event


def test_agent_stop_uploads_the_transcript_and_session_end_finds_it_by_session_id(tmp_path, server, repo):
    copilot_home = tmp_path / ".copilot"
    transcript = copilot_home / "session-state" / SID / "events.jsonl"
    transcript.parent.mkdir(parents=True)
    lines = CAPTURE.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:17]))  # the turn so far: agentStop comes before shutdown
    home = tmp_path / "client-home"
    env = hook_env(home, server.url, server.key, COPILOT_HOME=str(copilot_home))

    stop = payload("agentStop", cwd=str(repo), transcriptPath=str(transcript))
    proc, _ = run_hook("stop", stop, env, agent="copilot-cli")
    assert (proc.returncode, proc.stdout) == (0, b"")
    wait_for_worker(home)
    with transcript.open("ab") as f:
        f.write(b"".join(lines[17:]))
    run_hook("session-end", payload("sessionEnd", cwd=str(repo)), env, agent="copilot-cli")  # no path
    wait_for_worker(home)

    assert server.container.runner.wait_idle(120)
    session = server.container.sessions.get(server.team_id, SID)
    assert (session.agent, session.status, session.project) == ("copilot-cli", "learned", PROJECT)
    assert len(session.transcript_keys) == 2  # the turn, then the lines written after it
    caller = Principal(server.team_id, "t", "k", frozenset({KeyScope.READ}))
    contents = [
        m.content for m in server.container.memories.list(caller, MemoryFilter(project=PROJECT)).items
    ]
    assert any("SQLite WAL mode rather than Postgres" in c for c in contents), contents
    assert any("ruff before committing" in c for c in contents), contents


def test_session_end_without_a_transcript_on_disk_uploads_nothing(tmp_path, server, repo):
    home = tmp_path / "client-home"
    env = hook_env(home, server.url, server.key, COPILOT_HOME=str(tmp_path / "nowhere"))
    run_hook("session-end", payload("sessionEnd", cwd=str(repo)), env, agent="copilot-cli")
    wait_for_worker(home)
    assert "no transcript for copilot-cli" in (home / "capture" / "worker.log").read_text()
    shutil.rmtree(home)

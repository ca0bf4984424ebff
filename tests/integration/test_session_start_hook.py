"""The context hooks as agents run them: a separate process, hook JSON on stdin, a real server on 127.0.0.1.

Covers each agent's payload and output format, single-use handoffs across two sessions, and failing
open (exit 0, no output) on a down server, a hanging server, a bad key and bad stdin.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tomli_w
from cairn.cli import hooks_context
from cairn.cli.hooks_context import client_config, detect_agent, render
from cairn.domain.models import MemoryKind, Provenance
from cairn.services.context import PROMPT_BUDGET
from cairn.services.memories import NewMemory
from cairn.services.tokens import count_tokens

from tests.live import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EVENTS = Path(__file__).resolve().parents[1] / "events" / "hooks"
PROJECT = "github.com/acme/shop"
FAST_HOOK = [sys.executable, "-m", "cairn.cli.hooks_context"]


def _payload(name: str, repo: Path, **extra) -> dict:
    data = json.loads((EVENTS / f"session_start_{name}.json").read_text())
    if "workspace_roots" in data:
        data["workspace_roots"] = [str(repo)]
    else:
        data["cwd"] = str(repo)
    return data | extra


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "shop"
    path.mkdir()
    (path / ".cairn.toml").write_text(f'project = "{PROJECT}"\n')
    return path


@pytest.fixture
def hook_env(tmp_path, live_server, team_a) -> dict[str, str]:
    """The user's config as `cairn serve` writes it: URL and key in <CAIRN_HOME>/config.toml."""
    home = tmp_path / "cairn-home"
    home.mkdir()
    (home / "config.toml").write_text(
        tomli_w.dumps({"server": {"url": live_server, "api_key": team_a.admin}})
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CAIRN_URL", "CAIRN_API_KEY")}
    return env | {"CAIRN_HOME": str(home), "CAIRN_HOOK_NO_DRAIN": "1"}


def _remember(container, team, kind, content, **kw):
    principal = container.keys.authenticate(team.admin)
    kw.setdefault("project", PROJECT)
    return container.memories.remember(principal, NewMemory(kind=kind, content=content, **kw))


def _run(env, payload, *args, cmd=FAST_HOOK, event="session-start"):
    stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([*cmd, event, *args], input=stdin, env=env, capture_output=True, timeout=30)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_session_start_prints_context_as_hook_specific_output(agent, hook_env, repo, container, team_a):
    _remember(container, team_a, MemoryKind.PREFERENCE, "Run ruff before every commit")
    proc = _run(hook_env, _payload(agent.replace("-", "_"), repo))
    assert proc.returncode == 0 and proc.stderr == b""
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Run ruff before every commit" in context
    assert context.startswith("<cairn-context>") and count_tokens(context) <= 1500


def test_cursor_gets_its_own_additional_context_field(hook_env, repo, container, team_a):
    _remember(container, team_a, MemoryKind.DECISION, "Payments use idempotency keys")
    proc = _run(hook_env, _payload("cursor", repo))
    assert proc.returncode == 0
    assert "Payments use idempotency keys" in json.loads(proc.stdout)["additional_context"]


def test_the_agent_flag_wins_over_detection_and_the_budget_flag_is_passed(hook_env, repo, container, team_a):
    for i in range(40):
        _remember(container, team_a, MemoryKind.PREFERENCE, f"Convention number {i} " + "detail " * 40)
    proc = _run(hook_env, _payload("claude_code", repo), "--agent", "cursor", "--budget", "300")
    context = json.loads(proc.stdout)["additional_context"]
    assert count_tokens(context) <= 300


def test_a_handoff_reaches_only_the_next_session_of_its_agent(hook_env, repo, container, team_a):
    _remember(
        container,
        team_a,
        MemoryKind.HANDOFF,
        "Finish the refund endpoint",
        provenance=Provenance(agent="codex"),
    )
    claude = _run(hook_env, _payload("claude_code", repo))
    assert "Finish the refund endpoint" not in claude.stdout.decode()
    first = _run(hook_env, _payload("codex", repo))
    assert "Finish the refund endpoint" in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    second = _run(hook_env, _payload("codex", repo))
    assert "Finish the refund endpoint" not in second.stdout.decode()


def test_an_empty_store_prints_a_short_note(hook_env, repo):
    proc = _run(hook_env, _payload("claude_code", repo))
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "nothing is remembered yet" in context and count_tokens(context) < 100


def test_the_cairn_cli_command_runs_the_same_hook(hook_env, repo, container, team_a):
    _remember(container, team_a, MemoryKind.PREFERENCE, "Prefer small pull requests")
    proc = _run(hook_env, _payload("claude_code", repo), cmd=[sys.executable, "-m", "cairn.cli.main", "hook"])
    assert proc.returncode == 0
    assert "Prefer small pull requests" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_user_prompt_hook_adds_relevant_memories(hook_env, repo, container, team_a):
    _remember(container, team_a, MemoryKind.DECISION, "Payments retry three times with exponential backoff")
    payload = {
        "session_id": "s1",
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "why do payment retries back off?",
    }
    proc = _run(hook_env, payload, event="user-prompt")
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "Payments retry three times with exponential backoff" in out["additionalContext"]
    assert count_tokens(out["additionalContext"]) <= PROMPT_BUDGET


def test_user_prompt_hook_prints_nothing_without_a_prompt(hook_env, repo):
    proc = _run(hook_env, {"cwd": str(repo), "hook_event_name": "UserPromptSubmit"}, event="user-prompt")
    assert proc.returncode == 0 and proc.stdout == b""


# --- failing open ---------------------------------------------------------------------------------


def _env_for(url: str, key: str = "cairn_x") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_HOME"}
    return env | {"CAIRN_URL": url, "CAIRN_API_KEY": key, "CAIRN_HOOK_NO_DRAIN": "1"}


def test_a_down_server_gives_exit_0_and_no_output(repo):
    proc = _run(_env_for(f"http://127.0.0.1:{free_port()}"), _payload("claude_code", repo))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_hanging_server_is_abandoned_at_the_deadline_with_no_output(repo):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    held: list[socket.socket] = []
    accept = threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True)
    accept.start()
    try:
        proc = _run(_env_for(f"http://127.0.0.1:{listener.getsockname()[1]}"), _payload("codex", repo))
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


@pytest.mark.parametrize("stdin", [b"not json", b"\xff\xfe\x00garbage", b"[1, 2]", b""])
def test_bad_stdin_gives_exit_0_and_no_output(stdin, live_server):
    proc = _run(_env_for(live_server), stdin)
    assert proc.returncode == 0 and proc.stderr == b""
    if stdin in (b"[1, 2]", b""):  # valid JSON but no payload: context for the current directory, or nothing
        assert proc.stdout == b"" or "hookSpecificOutput" in json.loads(proc.stdout)
    else:
        assert proc.stdout == b""


def test_a_bad_key_gives_exit_0_and_no_output(live_server, repo):
    proc = _run(_env_for(live_server, "cairn_not_a_real_key"), _payload("claude_code", repo))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_an_unknown_event_prints_nothing(live_server, repo):
    proc = _run(_env_for(live_server), _payload("claude_code", repo), event="whatever")
    assert (proc.returncode, proc.stdout) == (0, b"")


# --- pieces, in process -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fixture", "agent"),
    [("claude_code", "claude-code"), ("codex", "codex"), ("gemini_cli", "gemini-cli"), ("cursor", "cursor")],
)
def test_each_agents_payload_is_recognised(fixture, agent, tmp_path):
    assert detect_agent(_payload(fixture, tmp_path), environ={}) == agent


def test_output_formats_per_agent_and_event():
    assert json.loads(render("codex", "user-prompt", "x"))["hookSpecificOutput"]["hookEventName"] == (
        "UserPromptSubmit"
    )
    assert json.loads(render("gemini-cli", "user-prompt", "x"))["hookSpecificOutput"]["hookEventName"] == (
        "BeforeAgent"
    )
    assert render("cursor", "user-prompt", "x") == ""
    assert render("plain", "session-start", "x") == "x"


def test_the_hook_reads_the_same_config_as_the_cli(tmp_path, monkeypatch):
    from cairn.cli import config

    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    monkeypatch.delenv("CAIRN_URL", raising=False)
    monkeypatch.delenv("CAIRN_API_KEY", raising=False)
    config.save("http://127.0.0.1:9999", "cairn_secret")
    cfg = config.load()
    assert client_config() == (cfg.url, cfg.api_key)
    monkeypatch.setenv("CAIRN_URL", "https://cairn.example.test/prod")
    assert client_config()[0] == config.load().url


def test_in_process_run_restores_the_alarm_handler_and_returns_0(monkeypatch):
    import signal

    monkeypatch.setenv("CAIRN_URL", f"http://127.0.0.1:{free_port()}")
    before = signal.getsignal(signal.SIGALRM)
    stdin = io.BytesIO(b'{"cwd": "/"}')
    stdin.isatty = lambda: False  # type: ignore[method-assign]
    stdin.fileno = lambda: _pipe_with(b'{"cwd": "/"}')  # type: ignore[method-assign]
    out = io.StringIO()
    assert hooks_context.run_hook("session-start", "codex", stdin=stdin, stdout=out, timeout=2) == 0
    assert out.getvalue() == "" and signal.getsignal(signal.SIGALRM) == before


def _pipe_with(data: bytes) -> int:
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


@pytest.mark.parametrize(("agent", "fixture"), [("claude-code", "claude_code"), ("codex", "codex")])
def test_the_command_install_hooks_writes_runs_the_hook(
    agent, fixture, tmp_path, hook_env, repo, container, team_a
):
    from cairn.cli.agents import AGENTS
    from cairn.cli.agents.base import Wiring
    from cairn.cli.install import apply

    _remember(container, team_a, MemoryKind.PREFERENCE, "Prefer table-driven tests")
    home = tmp_path / "agent-home"
    apply(AGENTS[agent].hook_edits(Wiring(home=home, python=sys.executable)))
    settings = home / (".claude/settings.json" if agent == "claude-code" else ".codex/hooks.json")
    group = json.loads(settings.read_text())["hooks"]["SessionStart"][0]
    command = group["hooks"][0]["command"]
    stdin = json.dumps(_payload(fixture, repo)).encode()
    # agents run hook commands through a shell
    proc = subprocess.run(
        ["/bin/sh", "-c", command], input=stdin, env=hook_env, capture_output=True, timeout=30
    )
    assert proc.returncode == 0
    assert "Prefer table-driven tests" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_hook_process_imports_no_web_framework_model_runtime_or_pydantic(repo):
    env = _env_for(f"http://127.0.0.1:{free_port()}")
    cmd = [sys.executable, "-X", "importtime", "-m", "cairn.cli.hooks_context", "session-start"]
    proc = subprocess.run(
        cmd, input=json.dumps({"cwd": str(repo)}).encode(), env=env, capture_output=True, timeout=30
    )
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.decode().splitlines()}
    assert "cairn" in imported and "http" in imported
    assert not imported & {
        "fastapi",
        "starlette",
        "onnxruntime",
        "numpy",
        "tokenizers",
        "pydantic",
        "typer",
        "rich",
    }


def test_session_start_asks_the_capture_queue_to_drain_after_printing(monkeypatch, live_server, team_a, repo):
    from cairn.capture import queue

    calls: list[str] = []
    monkeypatch.setattr(queue, "drain_in_background", lambda: calls.append("drain") or True)
    monkeypatch.delenv("CAIRN_HOOK_NO_DRAIN", raising=False)
    monkeypatch.setenv("CAIRN_URL", live_server)
    monkeypatch.setenv("CAIRN_API_KEY", team_a.admin)
    payload = json.dumps(_payload("claude_code", repo)).encode()
    stdin = io.BytesIO(payload)
    stdin.isatty = lambda: False  # type: ignore[method-assign]
    stdin.fileno = lambda: _pipe_with(payload)  # type: ignore[method-assign]
    out = io.StringIO()
    assert hooks_context.run_hook("session-start", "claude-code", stdin=stdin, stdout=out) == 0
    assert "hookSpecificOutput" in out.getvalue() and calls == ["drain"]

"""`cairn doctor` finds what stops Cairn from working and says how to fix it: one line per check, `--json`,
exit 1 on a failure. Agents' settings live in a scratch home; the server is the real app on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from cairn.cli.agents import claude_code, codex, copilot
from cairn.cli.agents.base import Wiring
from cairn.cli.install import apply
from cairn.cli.main import app
from typer.testing import CliRunner

pytestmark = pytest.mark.integration
runner = CliRunner()
CAPTURE = {"stop": True, "session-end": True, "pre-compact": True}


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cairn-home"))
    monkeypatch.delenv("CAIRN_URL", raising=False)
    monkeypatch.delenv("CAIRN_API_KEY", raising=False)


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


def _doctor(url: str, key: str, home: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["doctor", "--json", "--url", url, "--key", key, "--home", str(home)])
    return result.exit_code, json.loads(result.output)


def _check(report: dict, agent: str | None, name: str) -> dict:
    [found] = [c for c in report["checks"] if c["agent"] == agent and c["name"] == name]
    return found


def _wire(home: Path, module, url: str, key: str, python: str = sys.executable) -> None:
    wiring = Wiring(home=home, python=python, url=url, key=key, capture=CAPTURE)
    apply(
        module.hook_edits(wiring)
    )  # as `install-hooks`, then `install-mcp`: each plans on the files as they are
    apply(module.mcp_edits(wiring))


def test_a_working_setup_passes_with_every_check_ok_or_not_installed(live_server, team_a, home):
    _wire(home, claude_code, live_server, team_a.admin)
    _wire(home, codex, live_server, team_a.admin)

    code, report = _doctor(live_server, team_a.admin, home)

    assert code == 0 and report["ok"] is True, report
    assert _check(report, None, "key")["status"] == "ok"
    for agent in ("claude-code", "codex"):
        assert _check(report, agent, "hooks")["status"] == "ok"
        assert _check(report, agent, "mcp")["status"] == "ok"
    assert _check(report, "codex", "hooks trusted")["status"] == "ok"
    assert _check(report, "cursor", "hooks") == {
        "agent": "cursor",
        "name": "hooks",
        "status": "warn",
        "detail": "not installed",
        "fix": "cairn install-hooks --agent cursor",
    }


def test_untrusted_codex_hooks_are_a_failure_with_the_fix(live_server, team_a, home):
    _wire(home, codex, live_server, team_a.admin)
    config = home / ".codex" / "config.toml"
    lines = config.read_text().splitlines(keepends=True)
    config.write_text("".join(ln for ln in lines if "hooks.state" not in ln and "trusted_hash" not in ln))
    assert "state" not in tomllib.loads(config.read_text()).get("hooks", {})

    code, report = _doctor(live_server, team_a.admin, home)

    assert code == 1 and report["ok"] is False
    trusted = _check(report, "codex", "hooks trusted")
    assert trusted["status"] == "fail"
    assert "Codex skips untrusted hooks" in trusted["detail"] and "session_start" in trusted["detail"]
    assert "cairn install-hooks --agent codex" in trusted["fix"] and "/hooks" in trusted["fix"]


def test_a_hook_whose_interpreter_is_missing_is_a_failure_with_the_fix(live_server, team_a, home):
    _wire(home, claude_code, live_server, team_a.admin, python="/gone/venv/bin/python3")

    code, report = _doctor(live_server, team_a.admin, home)

    assert code == 1
    hooks = _check(report, "claude-code", "hooks")
    assert hooks["status"] == "fail"
    assert hooks["detail"] == "its interpreter /gone/venv/bin/python3 does not exist"
    assert hooks["fix"].startswith("cairn install-hooks --agent claude-code")


def test_a_wrong_key_is_a_failure_for_the_cli_and_for_an_agents_mcp_entry(live_server, team_a, home):
    _wire(home, claude_code, live_server, "cairn_wrong_0123456789")

    code, report = _doctor(live_server, "cairn_also_wrong", home)

    assert code == 1
    key = _check(report, None, "key")
    assert key["status"] == "fail" and key["detail"] == "the key was refused (401)"
    assert "cairn apikey create" in key["fix"]
    mcp = _check(report, "claude-code", "mcp")
    assert mcp["status"] == "fail" and "the key was refused" in mcp["detail"]
    assert mcp["fix"] == "cairn install-mcp --client claude-code --key <a valid key>"


def test_an_unreachable_server_is_one_failure_line_with_the_fix(home):
    result = runner.invoke(app, ["doctor", "--url", "http://127.0.0.1:9", "--key", "k", "--home", str(home)])

    assert result.exit_code == 1
    [server] = [ln for ln in result.output.splitlines() if "server:" in ln]
    assert server.startswith("FAIL server: cannot reach http://127.0.0.1:9")
    assert "fix: start it with `cairn serve --detach`" in server
    assert "Traceback" not in result.output


def test_copilot_cli_hooks_and_mcp_are_checked_and_a_missing_interpreter_fails(live_server, team_a, home):
    _wire(home, copilot, live_server, team_a.admin)

    code, report = _doctor(live_server, team_a.admin, home)

    assert code == 0, report
    assert _check(report, "copilot-cli", "hooks") | {"fix": None} == {
        "name": "hooks",
        "status": "ok",
        "detail": "5 installed",
        "fix": None,
        "agent": "copilot-cli",
    }
    assert _check(report, "copilot-cli", "mcp")["status"] == "ok"

    _wire(home, copilot, live_server, team_a.admin, python="/gone/venv/bin/python3")
    code, report = _doctor(live_server, team_a.admin, home)
    hooks = _check(report, "copilot-cli", "hooks")
    assert (code, hooks["status"]) == (1, "fail")
    assert hooks["detail"] == "its interpreter /gone/venv/bin/python3 does not exist"
    assert hooks["fix"].startswith("cairn install-hooks --agent copilot-cli")

"""`cairn install-hooks` / `install-mcp` / `uninstall` on realistic settings files of every agent.

Each agent's fixture home (tests/fixtures/agent_settings/<agent>) holds settings with other hooks and
MCP servers. Installing twice must add Cairn once and keep everything else; a backup of the original
is written; uninstalling gives back the original settings (semantically equal, comments kept in TOML).
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from cairn.cli import install
from cairn.cli.main import app
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_settings"
KEY = "cairn_test_0123456789abcdef"
URL = "https://cairn.example.test"
OURS = "cairn.cli.hooks_context"
HOOK_AGENTS = ["claude-code", "codex", "gemini-cli", "cursor", "copilot-cli"]
ALL_AGENTS = [*HOOK_AGENTS, "opencode"]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cairn-home"))
    monkeypatch.delenv("CAIRN_URL", raising=False)
    monkeypatch.delenv("CAIRN_API_KEY", raising=False)


def _home(tmp_path: Path, agent: str) -> Path:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / agent, home)
    return home


def _files(home: Path) -> dict[str, object]:
    """Every settings file under `home`, parsed (backups left out)."""
    out: dict[str, object] = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file() and ".cairn-backup-" not in p.name):
        text = path.read_text()
        out[str(path.relative_to(home))] = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    return out


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _install(home: Path, agent: str) -> None:
    if agent != "opencode":
        _cli("install-hooks", "--agent", agent, "--home", str(home))
    _cli("install-mcp", "--client", agent, "--home", str(home), "--url", URL, "--key", KEY)


def _contains(new: object, old: object) -> bool:
    """Everything in `old` is still in `new` (lists: old items in order, others may be appended)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _contains(new[k], v) for k, v in old.items())
    if isinstance(old, list):
        if not isinstance(new, list):
            return False
        it = iter(new)
        return all(any(item == candidate for candidate in it) for item in old)
    return new == old


def _commands(data: object) -> list[str]:
    found: list[str] = []
    if isinstance(data, dict):
        for key in ("command", "bash"):  # Copilot CLI's hooks name the command "bash"
            if isinstance(data.get(key), str):
                found.append(data[key])
        for value in data.values():
            found += _commands(value)
    elif isinstance(data, list):
        for value in data:
            found += _commands(value)
    return found


def _servers(files: dict[str, object]) -> list[dict]:
    out = []
    for data in files.values():
        assert isinstance(data, dict)
        for key in ("mcpServers", "mcp", "mcp_servers"):
            if isinstance(data.get(key), dict) and "cairn" in data[key]:
                out.append(data[key]["cairn"])
    return out


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_installing_twice_adds_cairn_once_and_keeps_every_other_setting(tmp_path, agent):
    home = _home(tmp_path, agent)
    original = _files(home)
    _install(home, agent)
    once = {p: (home / p).read_text() for p in _files(home)}
    _install(home, agent)
    assert {p: (home / p).read_text() for p in _files(home)} == once  # the second run changed nothing
    after = _files(home)
    for path, data in original.items():
        assert _contains(after[path], data), path
    servers = _servers(after)
    assert len(servers) == 1
    assert URL + "/mcp" in json.dumps(servers[0]) and f"Bearer {KEY}" in json.dumps(servers[0])
    commands = [c for data in after.values() for c in _commands(data) if OURS in c]
    if agent == "opencode":
        assert commands == []
    else:
        assert sum("session-start" in c for c in commands) == 1
        assert all(f"--agent {agent}" in c for c in commands)


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_a_timestamped_backup_of_each_changed_file_is_written_first(tmp_path, agent):
    home = _home(tmp_path, agent)
    originals = {p: (home / p).read_text() for p in _files(home)}
    _install(home, agent)
    backups = sorted(p for p in home.rglob("*.cairn-backup-*"))
    assert backups
    saved: dict[str, list[str]] = {}
    for backup in backups:
        source = backup.with_name(backup.name.split(".cairn-backup-")[0])
        saved.setdefault(str(source.relative_to(home)), []).append(backup.read_text())
    for rel, text in originals.items():
        if (home / rel).read_text() != text:  # every changed file has its original saved
            assert text in saved[rel], rel


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_uninstall_gives_back_the_original_settings(tmp_path, agent):
    home = _home(tmp_path, agent)
    original = _files(home)
    original_text = {p: (home / p).read_text() for p in original}
    _install(home, agent)
    _cli("uninstall", "--agent", agent, "--home", str(home))
    assert _files(home) == original
    for path, text in original_text.items():
        if path.endswith(".toml"):  # comments and layout survive too
            assert (home / path).read_text() == text


def test_uninstall_without_an_agent_removes_cairn_from_every_agent(tmp_path):
    home = tmp_path / "home"
    for agent in ALL_AGENTS:
        shutil.copytree(FIXTURES / agent, home, dirs_exist_ok=True)
    original = _files(home)
    for agent in ALL_AGENTS:
        _install(home, agent)
    assert _files(home) != original
    _cli("uninstall", "--home", str(home))
    assert _files(home) == original


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_installing_into_an_empty_home_creates_the_files_and_uninstall_removes_them(tmp_path, agent):
    home = tmp_path / "empty"
    home.mkdir()
    _install(home, agent)
    created = _files(home)
    assert created and len(_servers(created)) == 1
    for path in created:
        mode = (home / path).stat().st_mode & 0o777
        if KEY in (home / path).read_text():
            assert mode == 0o600, path  # a file holding the key is private to the user
    _cli("uninstall", "--agent", agent, "--home", str(home))
    assert _files(home) == {}


@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_dry_run_prints_a_masked_diff_and_writes_nothing(tmp_path, agent):
    home = _home(tmp_path, agent)
    before = {p: (home / p).read_text() for p in _files(home)}
    output = _cli(
        "install-mcp", "--client", agent, "--home", str(home), "--url", URL, "--key", KEY, "--dry-run"
    )
    assert "+++" in output and "/mcp" in output
    assert KEY not in output and KEY[:8] + "…" in output
    assert {p: (home / p).read_text() for p in _files(home)} == before
    assert not list(home.rglob("*.cairn-backup-*"))


def test_the_url_and_key_default_to_the_user_config(tmp_path):
    from cairn.cli import config

    config.save("http://127.0.0.1:8899", "cairn_from_config_123")
    home = _home(tmp_path, "cursor")
    _cli("install-mcp", "--client", "cursor", "--home", str(home))
    server = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["cairn"]
    assert server == {
        "url": "http://127.0.0.1:8899/mcp",
        "headers": {"Authorization": "Bearer cairn_from_config_123"},
    }


def test_a_settings_file_that_is_not_json_is_left_alone_with_a_clear_error(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    broken = home / ".claude" / "settings.json"
    broken.write_text("{ not json")
    result = runner.invoke(app, ["install-hooks", "--agent", "claude-code", "--home", str(home)])
    assert result.exit_code == 1 and "not valid JSON" in result.output
    assert broken.read_text() == "{ not json" and not list(home.rglob("*.cairn-backup-*"))


@pytest.mark.parametrize(
    ("agent", "settings"), [("cursor", ".cursor/hooks.json"), ("copilot", ".copilot/hooks/cairn.json")]
)
def test_a_hook_event_that_is_not_a_list_is_left_alone_with_a_clear_error(tmp_path, agent, settings):
    odd = tmp_path / "home" / settings
    odd.parent.mkdir(parents=True)
    odd.write_text('{"version": 1, "hooks": {"sessionStart": "echo hi"}}')
    result = runner.invoke(app, ["install-hooks", "--agent", agent, "--home", str(tmp_path / "home")])
    assert result.exit_code == 1 and '"hooks.sessionStart" is not a list' in result.output
    assert json.loads(odd.read_text()) == {"version": 1, "hooks": {"sessionStart": "echo hi"}}


def test_an_unknown_agent_is_refused(tmp_path):
    result = runner.invoke(app, ["install-hooks", "--agent", "vim", "--home", str(tmp_path)])
    assert result.exit_code == 2 and "unknown agent" in result.output


def test_opencode_hooks_are_a_plugin_that_runs_cairns_hooks_with_this_interpreter(tmp_path):
    home = _home(tmp_path, "opencode")
    before = _files(home)
    output = _cli("install-hooks", "--agent", "opencode", "--home", str(home))
    plugin = home / ".config" / "opencode" / "plugin" / "cairn.js"
    source = plugin.read_text()
    plugin.rename(tmp_path / "cairn.js")
    assert f"created {plugin}" in output and _files(home) == before  # opencode.json is left alone
    (tmp_path / "cairn.js").rename(plugin)
    assert f"const PYTHON = {json.dumps(sys.executable)}" in source
    assert "cairn.capture.hook" in source and "cairn.cli.hooks_context" in source
    assert "unchanged" in _cli("install-hooks", "--agent", "opencode", "--home", str(home))
    _cli("uninstall", "--agent", "opencode", "--home", str(home))
    assert not plugin.exists() and _files(home) == before


def test_codex_mcp_entry_is_a_streamable_http_server_with_a_header(tmp_path):
    home = _home(tmp_path, "codex")
    _install(home, "codex")
    text = (home / ".codex" / "config.toml").read_text()
    assert text.startswith("# Codex configuration (edited by hand)")
    server = tomllib.loads(text)["mcp_servers"]["cairn"]
    assert server == {"url": URL + "/mcp", "http_headers": {"Authorization": f"Bearer {KEY}"}}


def test_capture_hooks_are_installed_when_the_capture_commands_are_registered(tmp_path, monkeypatch):
    monkeypatch.setattr(install, "capture_commands", lambda: {"stop": True, "session-end": False})
    home = _home(tmp_path, "claude-code")
    _cli("install-hooks", "--agent", "claude-code", "--home", str(home))
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    stop = [c for c in _commands(hooks["Stop"]) if "cairn.capture.hook stop" in c]
    assert len(stop) == 1 and stop[0].endswith("-m cairn.capture.hook stop --agent claude-code")
    assert _commands(hooks["SessionEnd"])[0].endswith("-m cairn.capture.hook session-end")
    assert "PreCompact" not in hooks
    assert "notify-send 'Claude Code' 'Done'" in _commands(hooks["Stop"])  # the user's own Stop hook stays
    _cli("uninstall", "--agent", "claude-code", "--home", str(home))
    assert _files(home) == _files(FIXTURES / "claude-code")


def test_copilot_hooks_are_cairns_own_personal_hook_file_and_mcp_is_what_copilot_mcp_add_writes(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(install, "capture_commands", lambda: {"stop": True, "session-end": True})
    home = _home(tmp_path, "copilot-cli")
    team = (home / ".copilot" / "hooks" / "team.json").read_text()
    _install(home, "copilot-cli")
    hooks = json.loads((home / ".copilot" / "hooks" / "cairn.json").read_text())
    assert hooks["version"] == 1
    assert {
        event: [h["bash"].split(" -m ")[1] for h in entries] for event, entries in hooks["hooks"].items()
    } == {
        "sessionStart": ["cairn.cli.hooks_context session-start --agent copilot-cli"],
        "userPromptSubmitted": ["cairn.cli.hooks_context user-prompt --agent copilot-cli"],
        "agentStop": ["cairn.capture.hook stop --agent copilot-cli"],
        "sessionEnd": ["cairn.capture.hook session-end --agent copilot-cli"],
    }
    assert all(h["type"] == "command" and h["timeoutSec"] > 0 for e in hooks["hooks"].values() for h in e)
    assert (home / ".copilot" / "hooks" / "team.json").read_text() == team  # the user's own hooks
    server = json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]["cairn"]
    assert server == {
        "tools": ["*"],
        "type": "http",
        "url": URL + "/mcp",
        "headers": {"Authorization": f"Bearer {KEY}"},
    }


def test_copilot_is_also_accepted_as_the_agent_name(tmp_path):
    home = tmp_path / "home"
    _cli("install-hooks", "--agent", "copilot", "--home", str(home))
    assert (home / ".copilot" / "hooks" / "cairn.json").exists()
    _cli("uninstall", "--agent", "copilot", "--home", str(home))
    assert not (home / ".copilot" / "hooks" / "cairn.json").exists()

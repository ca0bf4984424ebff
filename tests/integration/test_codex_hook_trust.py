"""`cairn install-hooks --agent codex` leaves Codex's hooks runnable: trust recorded as Codex's review does.

The expected hashes are what the real Codex CLI 0.169.0 (`codex app-server`, method `hooks/list`) reported
as `currentHash` with `trustStatus: "trusted"` for these exact hooks after this installer ran.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from cairn.cli.agents import codex
from cairn.cli.agents.base import Wiring
from cairn.cli.agents.codex_trust import FLAG_LINE, trusted_hash
from cairn.cli.install import apply
from cairn.cli.main import app
from typer.testing import CliRunner

pytestmark = pytest.mark.integration
runner = CliRunner()
PY = "/opt/cairn/venv/bin/python3"  # a command string only: nothing here runs or reads it
CAPTURE = {"stop": True, "session-end": True, "pre-compact": True}


def _install(home: Path, python: str = PY) -> list[str]:
    return apply(codex.hook_edits(Wiring(home=home, python=python, capture=CAPTURE)))


def _states(home: Path) -> dict[str, str]:
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    return {k: v["trusted_hash"] for k, v in config.get("hooks", {}).get("state", {}).items()}


def test_the_trust_hash_is_the_one_codex_computes():
    session_start = {
        "type": "command",
        "command": f"{PY} -m cairn.cli.hooks_context session-start --agent codex",
    }
    assert (
        trusted_hash("SessionStart", {**session_start, "timeout": 10}, "startup|resume|clear")
        == "sha256:bc424171056f8c64fe6319df45c891cfa8fdd3938279f999ada2e4dc3530d07c"
    )
    pre_compact = {"type": "command", "command": f"{PY} -m cairn.capture.hook pre-compact --agent codex"}
    assert (
        trusted_hash("PreCompact", {**pre_compact, "timeout": 30})
        == "sha256:adbc96c6ea6040ca68911793ad7a9c05e868899733931b43ff7af622e18fda7b"
    )
    stop = {"type": "command", "command": f"{PY} -m cairn.capture.hook stop --agent codex", "timeout": 30}
    # Codex ignores a Stop matcher, so it is no part of the identity
    assert trusted_hash("Stop", stop, "anything") == trusted_hash("Stop", stop)


def test_installing_records_trust_for_every_cairn_hook_and_turns_hooks_on(tmp_path):
    home = tmp_path / "home"
    _install(home)

    # keys: the absolute hooks.json path, Codex's event label, group and handler positions
    at = f"{(home / '.codex' / 'hooks.json').absolute()}:"
    assert _states(home) == {
        at + "session_start:0:0": "sha256:bc424171056f8c64fe6319df45c891cfa8fdd3938279f999ada2e4dc3530d07c",
        at
        + "user_prompt_submit:0:0": "sha256:081318433b9cb353b5bd26deea5bab86f0afde28c1f947a9d9b154860f27b316",
        at + "stop:0:0": "sha256:ee4dc63f409b2cd19218ee81de0a63faf2431987220da9cf5864b5817197125e",
        at + "pre_compact:0:0": "sha256:adbc96c6ea6040ca68911793ad7a9c05e868899733931b43ff7af622e18fda7b",
    }
    config = (home / ".codex" / "config.toml").read_text()
    assert FLAG_LINE in config
    assert tomllib.loads(config)["features"]["codex_hooks"] is True


def test_running_the_installer_again_changes_nothing(tmp_path):
    home = tmp_path / "home"
    _install(home)
    before = {p: p.read_bytes() for p in (home / ".codex").iterdir()}

    report = _install(home)

    codex_dir = (home / ".codex").absolute()
    assert report == [f"unchanged {codex_dir / 'hooks.json'}", f"unchanged {codex_dir / 'config.toml'}"]
    assert {p: p.read_bytes() for p in (home / ".codex").iterdir()} == before


def test_a_changed_hook_command_records_trust_again(tmp_path):
    home = tmp_path / "home"
    _install(home)
    first = _states(home)

    _install(home, python="/opt/other/bin/python3")

    second = _states(home)
    assert set(second) == set(first)  # same positions, new hashes, no stale entries left
    assert all(second[k] != first[k] for k in first)
    config = (home / ".codex" / "config.toml").read_text()
    assert config.count("[hooks.state.") == 4 and config.count(FLAG_LINE) == 1


def test_trust_of_other_hooks_and_every_other_setting_is_kept(tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        '# mine\nmodel = "gpt-5"\n\n[features]\nweb_search_request = true\n\n'
        '[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n'
    )

    _install(home)

    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert config["model"] == "gpt-5" and config["features"]["web_search_request"] is True
    assert config["hooks"]["state"]["/elsewhere/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:abc"}
    assert "# mine" in (home / ".codex" / "config.toml").read_text()


def test_hooks_turned_off_by_the_user_stay_off_and_the_installer_says_so_loudly(tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n")

    result = runner.invoke(app, ["install-hooks", "--agent", "codex", "--home", str(home)])

    assert result.exit_code == 0, result.output
    assert "[features] hooks = false" in result.output and "will not run" in result.output
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["features"] == {"hooks": False}


def test_uninstall_removes_cairns_trust_entries_and_flag(tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    original = 'model = "gpt-5"\n'
    (home / ".codex" / "config.toml").write_text(original)
    _install(home)

    apply(codex.remove_edits(Wiring(home=home, python=PY)))

    assert (home / ".codex" / "config.toml").read_text() == original
    assert not (home / ".codex" / "hooks.json").exists()

"""`cairn serve --detach` starts a real server in the background and `cairn stop` stops it cleanly;
`cairn service install` writes (or with --dry-run prints) a user service for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.integration.capture_helpers import hook_env
from tests.live import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def cairn(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def env(tmp_path):
    env = hook_env(tmp_path / "home", "http://127.0.0.1:1", "unused")
    del env["CAIRN_URL"], env["CAIRN_API_KEY"]
    env["HOME"] = str(tmp_path / "user")
    return env


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def test_detach_answers_before_returning_and_stop_ends_it_and_removes_the_pid_file(env, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = cairn(env, "serve", "--port", str(port), "--detach")
    try:
        assert started.returncode == 0, started.stderr
        pid_file = tmp_path / "home" / "serve.pid"
        running = json.loads(pid_file.read_text())
        assert running["url"] == url
        assert f"Cairn running on {url} (pid {running['pid']})" in started.stdout
        assert httpx.get(f"{url}/v1/health", timeout=5).json()["status"] == "ok"

        status = cairn(env, "status", "--json")  # the detached server wrote the user config
        assert status.returncode == 0 and json.loads(status.stdout)["url"] == url

        again = cairn(env, "serve", "--port", str(free_port()), "--detach")
        assert again.returncode == 1
        assert again.stderr.strip().startswith(f"error: Cairn is already running (pid {running['pid']}")
    finally:
        stopped = cairn(env, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped Cairn (pid {running['pid']}" in stopped.stdout
    assert not pid_file.exists() and _gone(running["pid"])
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/v1/health", timeout=2)

    not_running = cairn(env, "stop")
    assert not_running.returncode == 0 and "Cairn is not running" in not_running.stdout


def test_detach_reports_a_server_that_dies_at_start_in_one_line(env, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "cairn.db").mkdir()  # the store cannot be opened
    started = cairn(env, "serve", "--port", str(free_port()), "--detach")
    assert started.returncode == 1
    assert started.stderr.startswith("error: the server exited at start:")
    assert len(started.stderr.strip().splitlines()) == 1


def test_service_install_dry_run_prints_a_systemd_unit_and_writes_nothing(env, tmp_path):
    result = cairn(env, "service", "install", "--platform", "linux", "--port", "9999", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "[Service]" in result.stdout and "serve --host 127.0.0.1 --port 9999" in result.stdout
    assert f"CAIRN_HOME={tmp_path / 'home'}" in result.stdout
    assert ".config/systemd/user/cairn.service" in result.stderr
    assert not (tmp_path / "user").exists()


def test_service_install_writes_the_unit_or_the_launchd_plist_in_the_users_home(env, tmp_path):
    linux = cairn(env, "service", "install", "--platform", "linux")
    assert linux.returncode == 0, linux.stderr
    unit = (tmp_path / "user" / ".config" / "systemd" / "user" / "cairn.service").read_text()
    assert unit.startswith("[Unit]") and f"ExecStart={sys.executable} -m cairn.cli.main serve" in unit
    assert "systemctl --user enable --now cairn" in linux.stdout

    mac = cairn(env, "service", "install", "--platform", "macos")
    assert mac.returncode == 0, mac.stderr
    plist = (tmp_path / "user" / "Library" / "LaunchAgents" / "dev.cairn.plist").read_text()
    assert "<string>dev.cairn</string>" in plist and f"<string>{sys.executable}</string>" in plist


def test_service_install_for_an_unknown_platform_says_which_exist(env):
    result = cairn(env, "service", "install", "--platform", "windows")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: no user service for windows; use --platform linux or macos"

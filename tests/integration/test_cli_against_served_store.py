"""The README's first command, as a user runs it: `cairn serve`, then `cairn remember` / `cairn recall`
as separate processes with no flags (the key comes from the user config that `serve` wrote)."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CAIRN = [sys.executable, "-m", "cairn.cli.main"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    env.pop("CAIRN_URL", None)
    env.pop("CAIRN_API_KEY", None)
    port = _port()
    proc = subprocess.Popen(
        [*CAIRN, "serve", "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/v1/health", timeout=0.5).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"server did not come up: {proc.stderr.read().decode()[-2000:]}")
    yield env, url, tmp_path
    proc.terminate()
    proc.wait(timeout=10)


def _cairn(env, *args, cwd=None):
    return subprocess.run([*CAIRN, *args], env=env, capture_output=True, text=True, timeout=60, cwd=cwd)


def test_serve_creates_a_local_admin_key_that_remember_and_recall_use_without_flags(served):
    env, url, tmp = served
    config = (Path(env["CAIRN_HOME"]) / "config.toml").read_text()
    assert url in config and "cairn_" in config
    assert oct((Path(env["CAIRN_HOME"]) / "config.toml").stat().st_mode & 0o777) == "0o600"

    repo = tmp / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:Acme/Shop.git\n')
    made = _cairn(env, "remember", "Integration tests need the payments stub on port 9100", cwd=repo)
    assert made.returncode == 0, made.stderr
    assert "github.com/acme/shop" in made.stdout

    found = _cairn(env, "recall", "which port for the payments stub?", "--json", cwd=repo)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["memory"]["content"].startswith("Integration tests need the payments stub")

    status = _cairn(env, "status", cwd=repo)
    assert status.returncode == 0 and "github.com/acme/shop" in status.stdout


def test_cli_reports_api_errors_with_a_message_and_exit_1(served):
    env, _, _ = served
    r = _cairn(env, "forget", "mem_does-not-exist")
    assert r.returncode == 1 and "error" in r.stderr


def test_apikey_create_list_revoke_and_export_import_through_the_cli(served):
    env, _, tmp = served
    made = _cairn(env, "apikey", "create", "--member", "dev", "--scope", "read")
    assert made.returncode == 0, made.stderr
    key_id = made.stdout.split()[1]
    listed = _cairn(env, "apikey", "list")
    assert key_id in listed.stdout
    assert _cairn(env, "apikey", "revoke", key_id).returncode == 0

    _cairn(env, "remember", "exported fact", "--project", "p1")
    dump = tmp / "dump.jsonl"
    assert _cairn(env, "export", str(dump)).returncode == 0
    assert "exported fact" in dump.read_text()
    # importing into the same team skips what is there already
    again = _cairn(env, "import", str(dump))
    assert again.returncode == 0 and "0 memories" in again.stdout

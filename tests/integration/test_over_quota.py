"""Two teams behind a gateway that has put one of them over its quota: that team's hooks, CLI and
`cairn doctor` say "over quota, retry after N s", and the other team is served as before.

The gateway here is a real HTTP server on 127.0.0.1 in front of the real Cairn server: for the team over
its quota it answers exactly what the stack's QUOTA_EXCEEDED gateway response declares (429, Retry-After,
Cairn's error body; tests/infra/test_quotas.py holds the template to it), and it forwards everything
else. The metering that decides who is over quota is API Gateway's own (usage plans): neither moto nor
LocalStack's community edition enforces it, so it is proven only on a real account (docs/deploy.md).
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
import tomli_w
from cairn.capture.quota import hook_log_path
from cairn.cli.client import CairnClient
from cairn.cli.doctor import run_checks
from cairn.cli.errors import ApiError, explain
from cairn.domain.models import MemoryKind
from cairn.services.memories import NewMemory

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"
RETRY_AFTER = "3600"
OVER_QUOTA_BODY = {
    "error": {
        "code": "over_quota",
        "message": "this team's daily request quota is used up; it renews at 00:00 UTC",
    }
}


@pytest.fixture
def gateway(live_server, team_a):
    """A 127.0.0.1 front: 429 for team A's key (over its quota), everything else to the Cairn server."""
    upstream = urlsplit(live_server)
    over = f"Bearer {team_a.admin}"

    class Front(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if (
                self.path.startswith("/v1/")
                and self.headers.get("Authorization") == over
                and (self.path != "/v1/health")
            ):
                body = json.dumps(OVER_QUOTA_BODY).encode()
                self.send_response(429)
                self.send_header("Retry-After", RETRY_AFTER)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=10)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            conn.request("GET", self.path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            conn.close()

        def log_message(self, *args) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Front)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "shop"
    path.mkdir()
    (path / ".cairn.toml").write_text(f'project = "{PROJECT}"\n')
    return path


def _home(tmp_path, name: str, url: str, key: str):
    home = tmp_path / name
    home.mkdir()
    (home / "config.toml").write_text(tomli_w.dumps({"server": {"url": url, "api_key": key}}))
    return home


def _hook(home, repo) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CAIRN_URL", "CAIRN_API_KEY")}
    env |= {"CAIRN_HOME": str(home), "CAIRN_HOOK_NO_DRAIN": "1"}
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "cwd": str(repo), "source": "startup"}
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli.hooks_context", "session-start", "--agent", "claude-code"],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=30,
    )


def _remember(container, team, content: str) -> None:
    caller = container.keys.authenticate(team.admin)
    container.memories.remember(caller, NewMemory(MemoryKind.PREFERENCE, content, project=PROJECT))


def test_the_team_over_quota_gets_nothing_and_its_hook_log_says_so_while_the_other_is_served(
    gateway, container, team_a, team_b, repo, tmp_path
):
    _remember(container, team_a, "Run ruff before every commit")
    _remember(container, team_b, "Deploy with make release")
    home_a = _home(tmp_path, "home-a", gateway, team_a.admin)
    home_b = _home(tmp_path, "home-b", gateway, team_b.admin)

    over = _hook(home_a, repo)
    assert over.returncode == 0 and over.stdout == b"" and over.stderr == b""  # fails open, silently
    log = (home_a / "hooks.log").read_text()
    assert "session-start: no context: over quota, retry after 3600 s" in log

    served = _hook(home_b, repo)
    assert served.returncode == 0
    context = json.loads(served.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "make release" in context and "ruff" not in context
    assert not (home_b / "hooks.log").exists()


def test_the_cli_says_over_quota_with_the_retry_after_and_the_other_team_is_unaffected(
    gateway, team_a, team_b, tmp_path, monkeypatch
):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cli-home"))
    with pytest.raises(ApiError) as caught:
        CairnClient(gateway, team_a.admin).request("GET", "/v1/whoami")
    assert caught.value.status == 429 and caught.value.retry_after == 3600
    assert explain(caught.value) == (
        "over quota, retry after 3600 s (this team's daily request quota is used up; it renews at 00:00 UTC)"
    )
    assert CairnClient(gateway, team_b.admin).request("GET", "/v1/whoami")["team_id"] == team_b.team_id


def test_doctor_reports_the_quota_and_the_hooks_that_went_without_context(
    gateway, container, team_a, team_b, repo, tmp_path, monkeypatch
):
    home_a = _home(tmp_path, "home-a", gateway, team_a.admin)
    _hook(home_a, repo)
    monkeypatch.setenv("CAIRN_HOME", str(home_a))
    assert hook_log_path() == home_a / "hooks.log"

    checks = {c.name: c for c in run_checks(gateway, team_a.admin, tmp_path / "no-agents") if not c.agent}
    assert checks["quota"].status == "fail"
    assert checks["quota"].detail == "the team is over quota, retry after 3600 s"
    assert (
        checks["hooks quota"].status == "warn"
        and "over quota, retry after 3600 s" in checks["hooks quota"].detail
    )

    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home-b-clean"))
    checks = {c.name: c for c in run_checks(gateway, team_b.admin, tmp_path / "no-agents") if not c.agent}
    assert checks["key"].status == "ok" and "quota" not in checks and "hooks quota" not in checks

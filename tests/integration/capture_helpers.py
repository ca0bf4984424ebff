"""Run the capture hook as the agent would (a process, JSON on stdin) and wait for its detached worker."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def closed_port_url() -> str:
    """A URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def hook_env(home: Path, url: str, key: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "CODEX_"))}
    env.update({"CAIRN_HOME": str(home), "CAIRN_URL": url, "CAIRN_API_KEY": key, **extra})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "layers" / "core"), env.get("PYTHONPATH", "")])
    return env


def run_hook(event: str, payload: dict, env: dict[str, str], agent: str = "claude-code"):
    """Returns (completed process, seconds it took)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.capture.hook", event, "--agent", agent],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
    )
    return proc, time.perf_counter() - start


def wait_for_worker(home: Path, timeout: float = 60.0) -> None:
    """Until every request is cut into a part and no worker holds the capture lock."""
    requests = home / "capture" / "requests"
    lock = home / "capture" / "worker.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not list(requests.glob("*.json")) and lock.exists():
            with lock.open("a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pass
                else:
                    fcntl.flock(f, fcntl.LOCK_UN)
                    return
        time.sleep(0.05)
    raise AssertionError("the capture worker did not finish")


def outbox(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "capture" / "spool" / "outbox").glob("*.json"))


class Served:
    """A real embedded server whose upload URLs point at itself (settings carry the port from the start)."""

    def __init__(self, home: Path) -> None:
        import threading

        import httpx
        import uvicorn
        from cairn.api.app import create_app
        from cairn.bootstrap import build_container
        from cairn.settings import Settings

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.container = build_container(Settings(mode="local", home=home, port=port))
        team, _, self.key = self.container.keys.create_team("capture", "dev")
        self.team_id = team.id
        self.url = f"http://127.0.0.1:{port}"
        self._server = uvicorn.Server(
            uvicorn.Config(create_app(self.container), host="127.0.0.1", port=port, log_level="error")
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/v1/health", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)
        self.container.close()

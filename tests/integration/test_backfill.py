"""`cairn backfill` as a process, against a real served store and a fake HOME of real agent sessions.

The HOME (tests/agent_stores.py) holds this project's sessions of Claude Code (with a sub-agent), Codex
(with a worker thread, and one recorded in another clone of the repository), Gemini CLI, Copilot CLI and
OpenCode (its SQLite database), laid out as each agent stores them, and sessions of other projects.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.agent_stores import EXPECTED, PARTS, PROJECT, lay_out, make_project
from tests.integration.capture_helpers import Served, hook_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]
MOVED_STORES = ("XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "COPILOT_HOME")


@pytest.fixture
def world(tmp_path):
    project = make_project(tmp_path / "work" / "shop")
    home = lay_out(tmp_path / "home", project)
    return project, home


def env_for(world, served: Served, cairn_home) -> dict[str, str]:
    _, home = world
    env = hook_env(cairn_home, served.url, served.key, HOME=str(home), COLUMNS="200")
    for name in MOVED_STORES:
        env.pop(name, None)
    return env


def backfill(world, env, *args, timeout=400):
    project, _ = world
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "backfill", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def sessions(served: Served) -> dict[str, tuple]:
    """agent:id -> (project, parts, status), for every session the server holds."""
    return {
        f"{s.agent}:{s.id}": (s.project, len(s.transcript_keys), s.status)
        for s in served.container.sessions.iter_team(served.team_id)
    }


def store(served: Served) -> tuple:
    """What a run leaves on the server: its sessions, and the memories learned of them."""
    resp = httpx.get(
        served.url + "/v1/memories",
        params={"project": PROJECT, "limit": 200},
        headers={"Authorization": f"Bearer {served.key}"},
        timeout=30,
    )
    resp.raise_for_status()
    memories = sorted((m["kind"], m["content"], m["provenance"]["session_id"]) for m in resp.json()["items"])
    return sessions(served), memories


def learned_order(served: Served) -> list[str]:
    done = [s for s in served.container.sessions.iter_team(served.team_id) if s.project == PROJECT]
    return [f"{s.agent}:{s.id}" for s in sorted(done, key=lambda s: s.started_at)]


def test_dry_run_lists_this_projects_sessions_with_agent_date_and_size_and_sends_nothing(
    world, tmp_path, server
):
    code, out = backfill(world, env_for(world, server, tmp_path / "cli"), "--dry-run")
    assert code == 0, out
    rows = [line for line in out.splitlines() if line[:2] == "20"]
    assert [r.split()[2] for r in rows] == [k.split(":")[0] for k in EXPECTED]
    assert [r.split()[5] for r in rows] == [k.split(":")[1] for k in EXPECTED]
    assert rows[0].startswith("2025-09-03 00:52  claude-code") and "KB" in rows[0]
    assert "6 session(s)" in out and "3 session(s) of other projects left out" in out
    code, out = backfill(
        world,
        env_for(world, server, tmp_path / "cli"),
        "--dry-run",
        "--json",
        "--since",
        "2026-06-01",
        "--last",
        "2",
    )
    assert code == 0, out
    assert [f"{r['agent']}:{r['session_id']}" for r in json.loads(out)["sessions"]] == list(EXPECTED[-2:])
    assert sessions(server) == {}


def test_one_command_learns_exactly_this_projects_sessions_in_order_and_a_second_run_learns_nothing(
    world, tmp_path, server
):
    env = env_for(world, server, tmp_path / "cli")
    code, out = backfill(world, env)
    assert code == 0, out
    assert out.count("learned ") >= len(EXPECTED) and "backfill: 6 learned" in out, out
    held = sessions(server)
    assert set(held) == set(EXPECTED)
    assert all(project == PROJECT and status == "learned" for project, _, status in held.values())
    assert {k: parts for k, (_, parts, _) in held.items() if parts > 1} == PARTS
    assert learned_order(server) == list(EXPECTED)
    claude = server.container.sessions.get(server.team_id, EXPECTED[0].split(":", 1)[1])
    assert claude.started_at.isoformat().startswith("2025-09-03T00:52:31")  # when it ran, not when learned

    before = store(server)
    code, out = backfill(world, env)
    assert code == 0, out
    assert "backfill: 6 already learned" in out
    assert store(server) == before


def test_sessions_the_server_already_has_are_not_sent_again_from_another_machine(world, tmp_path, server):
    code, _ = backfill(world, env_for(world, server, tmp_path / "first"), "--last", "2", "--no-wait")
    assert code == 0
    code, out = backfill(world, env_for(world, server, tmp_path / "second"), "--no-wait")
    assert code == 0, out
    assert "4 sent" in out and "2 already learned" in out


def test_kill_9_after_the_first_acknowledged_session_then_a_rerun_ends_with_the_store_of_an_uninterrupted_run(
    world, tmp_path
):
    whole = Served(tmp_path / "server-whole")
    cut = Served(tmp_path / "server-cut")
    try:
        code, out = backfill(world, env_for(world, whole, tmp_path / "cli-whole"))
        assert code == 0, out

        env = env_for(world, cut, tmp_path / "cli-cut")
        proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "backfill"],
            env=env,
            cwd=world[0],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        ledger_dir = tmp_path / "cli-cut" / "capture" / "backfill"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            acknowledged = [
                k
                for f in ledger_dir.glob("*.json")
                for k, e in json.loads(f.read_text()).get("sessions", {}).items()
                if e["done"]
            ]
            if acknowledged:
                break
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert acknowledged == [EXPECTED[0]], "killed after the first session was acknowledged"
        assert set(sessions(cut)) < set(EXPECTED)

        code, out = backfill(world, env)
        assert code == 0, out
        assert "1 already learned" in out and "5 learned" in out
        assert store(cut) == store(whole)
    finally:
        whole.close()
        cut.close()


def test_a_session_of_another_project_is_learned_only_when_named_by_path(world, tmp_path, server):
    _, home = world
    (theirs,) = (home / ".claude" / "projects" / "-Users-robin-Developer-cli").glob("*.jsonl")
    session_id = theirs.stem
    env = env_for(world, server, tmp_path / "cli")
    code, out = backfill(world, env, "--dry-run")
    assert code == 0 and session_id not in out
    code, out = backfill(world, env, str(theirs))
    assert code == 0, out
    session = server.container.sessions.get(server.team_id, session_id)
    assert (session.project, session.agent, session.status) == ("cli", "claude-code", "learned")
    assert set(sessions(server)) == {f"claude-code:{session_id}"}


def test_a_backfilled_project_shows_its_sessions_in_the_ui_and_the_digest_catches_a_newcomer_up(
    world, tmp_path, server
):
    from cairn.api.app import create_app
    from fastapi.testclient import TestClient

    env = env_for(world, server, tmp_path / "cli")
    code, out = backfill(world, env)
    assert code == 0, out

    ui = TestClient(create_app(server.container), follow_redirects=False)
    form = ui.get("/ui/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    ui.post("/ui/login", data={"csrf": csrf, "key": server.key})
    page = ui.get("/ui/sessions", params={"project": PROJECT})
    assert page.status_code == 200
    listed = re.findall(r'href="[^"]*/ui/sessions/([^"/]+)"', page.text)
    assert sorted(listed) == sorted(k.split(":", 1)[1] for k in EXPECTED)

    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "digest", "--sessions", "10", "--budget", "8000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=world[0],
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # "## 2025-09-03 00:52 · claude-code, dev · session fe5e1c67-… (learned)"
    headings = re.findall(r"^## (\S+) \S+ · ([\w-]+)[^·]* · session (\S+) ", proc.stdout, re.M)
    assert [f"{agent}:{sid}" for _, agent, sid in headings] == list(EXPECTED)
    assert [day for day, _, _ in headings] == [
        "2025-09-03",
        "2026-02-23",
        "2026-06-25",
        "2026-11-23",
        "2026-11-23",
        "2026-12-04",
    ]

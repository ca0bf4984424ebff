"""Session-start hook latency, end to end: the hook as a process against `cairn serve` holding 10k memories.

What an agent waits for: start the hook process, read the payload on stdin, work out the project, ask
`GET /v1/context`, print the JSON, exit. The store is one team with `--memories` memories (default
10,000) in the hook's project, of every kind, written straight to SQLite (context without a prompt
reads the repository only, so nothing needs embedding); the server runs as its own process, as a user
runs it. Reported: the hook via `python -m cairn.cli.hooks_context` (what `cairn install-hooks` writes),
the same hook via the full `cairn hook session-start` CLI, the server's own answer time, and the
fail-open time with the server down.

    .venv/bin/python benchmarks/session_start_hook.py [--memories 10000] [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import tomli_w
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import (
    SqliteMemoryRepository,
    SqliteRelationRepository,
    SqliteTeamRepository,
)
from cairn.domain.ids import new_id
from cairn.domain.models import Memory, MemoryKind, Provenance, Scope, content_hash
from cairn.services.keys import KeyService
from cairn.services.tokens import count_tokens

PROJECT = "github.com/acme/shop"
KINDS = [
    MemoryKind.PREFERENCE,
    MemoryKind.PATTERN,
    MemoryKind.PROCEDURE,
    MemoryKind.DECISION,
    MemoryKind.FACT,
]


def populate(home: Path, n: int) -> str:
    """One team and `n` memories written straight through the repository (no per-item dedup lookups)."""
    db = SqliteDatabase(home / "cairn.db")
    try:
        keys = KeyService(SqliteTeamRepository(db))
        team, _, secret = keys.create_team("bench", "dev")
        repo = SqliteMemoryRepository(db)
        SqliteRelationRepository(db)  # the schema the server expects
        now = datetime.now(UTC)
        for i in range(n):
            kind = KINDS[i % len(KINDS)]
            details: dict = {}
            if kind is MemoryKind.PROCEDURE:
                details = {
                    "success_count": i % 9,
                    "failure_count": i % 3,
                    "steps": ["make test", "make release"],
                }
            elif kind is MemoryKind.DECISION:
                details = {"rationale": f"measured option {i} against the alternatives"}
            team_wide = i % 50 == 0
            content = (
                f"Memory {i}: when touching module_{i % 97} keep the {i % 13} invariants; "
                + "details " * (5 + i % 40)
            )
            repo.add(
                Memory(
                    id=new_id("mem"),
                    team_id=team.id,
                    kind=kind,
                    content=content,
                    scope=Scope.TEAM if team_wide else Scope.PROJECT,
                    project=None if team_wide else PROJECT,
                    tags=("error",) if i % 211 == 0 else (),
                    pinned=i % 500 == 0,
                    details=details,
                    created_at=now - timedelta(minutes=n - i),
                    content_hash=content_hash(kind, content),
                )
            )
        handoff = "Halfway through the refund flow"
        repo.add(
            Memory(
                id=new_id("mem"),
                team_id=team.id,
                kind=MemoryKind.HANDOFF,
                content=handoff,
                project=PROJECT,
                provenance=Provenance(agent="claude-code"),
                details={"next_steps": ["write the refund test"]},
                content_hash=content_hash(MemoryKind.HANDOFF, handoff),
            )
        )
        return secret
    finally:
        db.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd: list[str], env: dict[str, str], stdin: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, timeout=30)
    return (time.perf_counter() - start) * 1000, proc.stdout


def summary(label: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"| {label} | {len(ms)} | {statistics.median(ms):.0f} | {p95:.0f} | {ms[-1]:.0f} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "cairn-home"
        home.mkdir()
        repo = Path(tmp) / "shop"
        repo.mkdir()
        (repo / ".cairn.toml").write_text(f'project = "{PROJECT}"\n')
        t0 = time.perf_counter()
        key = populate(home, args.memories)
        print(f"populated {args.memories} memories in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        (home / "config.toml").write_text(tomli_w.dumps({"server": {"url": url, "api_key": key}}))
        env = {k: v for k, v in os.environ.items() if k not in ("CAIRN_URL", "CAIRN_API_KEY")}
        env |= {"CAIRN_HOME": str(home), "CAIRN_HOOK_NO_DRAIN": "1"}
        server = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            payload = json.dumps(
                {
                    "session_id": "bench",
                    "cwd": str(repo),
                    "hook_event_name": "SessionStart",
                    "source": "startup",
                }
            ).encode()
            fast = [
                sys.executable,
                "-m",
                "cairn.cli.hooks_context",
                "session-start",
                "--agent",
                "claude-code",
            ]
            cli = [sys.executable, "-m", "cairn.cli.main", "hook", "session-start", "--agent", "claude-code"]

            _, first = timed(fast, env, payload)  # warm the server and OS caches; delivers the handoff
            context = json.loads(first)["hookSpecificOutput"]["additionalContext"]
            assert "refund flow" in context, "the pending handoff should be in the first context"
            tokens = count_tokens(context)

            hook_ms = [timed(fast, env, payload)[0] for _ in range(args.runs)]
            cli_ms = [timed(cli, env, payload)[0] for _ in range(max(10, args.runs // 4))]
            headers = {"Authorization": f"Bearer {key}"}
            server_ms = []
            with httpx.Client(base_url=url, headers=headers) as http:
                for _ in range(args.runs):
                    start = time.perf_counter()
                    http.get(
                        "/v1/context", params={"project": PROJECT, "agent": "claude-code"}
                    ).raise_for_status()
                    server_ms.append((time.perf_counter() - start) * 1000)
        finally:
            server.terminate()
            server.wait(timeout=10)
        down_env = env | {"CAIRN_URL": f"http://127.0.0.1:{free_port()}"}
        down_ms = []
        for _ in range(max(10, args.runs // 4)):
            ms, out = timed(fast, down_env, payload)
            assert out == b""
            down_ms.append(ms)

    print(f"\n{args.memories} memories in the project; context {tokens} tokens (budget 1500)\n")
    print("| what | runs | p50 ms | p95 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    print(summary("hook process, `python -m cairn.cli.hooks_context` (installed form)", hook_ms))
    print(summary("hook process via the full `cairn hook session-start` CLI", cli_ms))
    print(summary("server only: `GET /v1/context` over HTTP", server_ms))
    print(summary("hook process, server down (fail open, no output)", down_ms))


if __name__ == "__main__":
    main()

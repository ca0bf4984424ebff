"""Stop-hook return time as a process: what an agent waits for when a turn ends.

Runs the capture hook the way an agent does (a new process, hook JSON on stdin) `--runs` times against
a real Claude Code transcript and reports p50/p95/max of the time until the process exits. Measured
both ways it can be installed: `python -m cairn.capture.hook stop` (standard library only) and the
full CLI `python -m cairn.cli.main hook stop`. The server is down (nothing listens on the URL) so the
detached worker only spools; the worker's own run time is reported separately (it does not block
the agent). Target: p95 <= 300 ms.

    .venv/bin/python benchmarks/stop_hook.py [--runs 30]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _paths import CLAUDE_SESSION

FIXTURE = CLAUDE_SESSION


def free_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def wait_worker(home: Path, timeout: float = 120) -> float:
    start = time.perf_counter()
    requests, lock = home / "capture" / "requests", home / "capture" / "worker.lock"
    while time.perf_counter() - start < timeout:
        if not list(requests.glob("*.json")) and lock.exists():
            with lock.open("a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(f, fcntl.LOCK_UN)
                    return time.perf_counter() - start
                except BlockingIOError:
                    pass
        time.sleep(0.01)
    return float("nan")


def measure(command: list[str], runs: int, tmp: Path) -> tuple[list[float], list[float]]:
    hook_times, worker_times = [], []
    for i in range(runs):
        home = tmp / f"home-{command[2]}-{i}"
        transcript = tmp / f"t-{i}.jsonl"
        shutil.copyfile(FIXTURE, transcript)
        env = {**os.environ, "CAIRN_HOME": str(home), "CAIRN_URL": free_url(), "CAIRN_API_KEY": "k"}
        payload = json.dumps(
            {
                "session_id": f"bench-{i}",
                "transcript_path": str(transcript),
                "cwd": str(tmp),
                "hook_event_name": "Stop",
            }
        ).encode()
        t = time.perf_counter()
        proc = subprocess.run(command, input=payload, capture_output=True, env=env, check=False)
        hook_times.append(time.perf_counter() - t)
        assert proc.returncode == 0 and proc.stdout == b"", proc
        worker_times.append(wait_worker(home))
    return hook_times, worker_times


def report(name: str, values: list[float]) -> None:
    ms = sorted(v * 1000 for v in values)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"  {name:<44} p50 {statistics.median(ms):6.0f} ms   p95 {p95:6.0f} ms   max {ms[-1]:6.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fast = [sys.executable, "-m", "cairn.capture.hook", "stop", "--agent", "claude-code"]
        full = [sys.executable, "-m", "cairn.cli.main", "hook", "stop", "--agent", "claude-code"]
        print(f"stop hook, {args.runs} runs, transcript {FIXTURE.stat().st_size / 1e6:.2f} MB, server down")
        hook, worker = measure(fast, args.runs, Path(tmp))
        report("python -m cairn.capture.hook stop", hook)
        full_hook, _ = measure(full, max(5, args.runs // 3), Path(tmp))
        report("python -m cairn.cli.main hook stop (full CLI)", full_hook)
        report("detached worker (cut+redact+gzip+spool)", worker)


if __name__ == "__main__":
    main()

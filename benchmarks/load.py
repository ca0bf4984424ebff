"""Bounded load on `cairn serve`: N clients × M mixed requests on loopback, then every acknowledged write
is read back.

The server runs as its own process on a scratch store (one team). Each client is a thread with its own
HTTP connection and a fixed mix: remember (POST /v1/memories, 40 %), hybrid search (POST /v1/search,
30 %), list (GET /v1/memories, 20 %) and the session-start block (GET /v1/context, 10 %). Reports
throughput, p50/p95/p99 per kind of request and overall, server errors (5xx or a dropped connection) and
client errors, then checks that every memory a 201 acknowledged is readable and searchable afterwards.
Prints its figures and ends with one JSON line.

    .venv/bin/python benchmarks/load.py [--clients 8] [--requests 100]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from cairn.adapters.local.db import SqliteDatabase  # noqa: E402
from cairn.adapters.local.repositories import SqliteTeamRepository  # noqa: E402
from cairn.services.keys import KeyService  # noqa: E402

PROJECT = "github.com/bench/load"
MIX = (("remember", 40), ("search", 30), ("list", 20), ("context", 10))
TOPICS = ("billing", "auth", "search", "ingest", "payments", "reports", "queue", "cache")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _team(home: Path) -> str:
    db = SqliteDatabase(home / "cairn.db")
    try:
        _, _, secret = KeyService(SqliteTeamRepository(db)).create_team("load", "bench")
        return secret
    finally:
        db.close()


def _client_run(url: str, key: str, n: int, seed: int, out: dict, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    kinds = [k for k, weight in MIX for _ in range(weight)]
    timings: dict[str, list[float]] = defaultdict(list)
    acked: list[tuple[str, str]] = []
    server_errors = client_errors = 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        for i in range(n):
            op = rng.choice(kinds)
            topic = rng.choice(TOPICS)
            start = time.perf_counter()
            try:
                if op == "remember":
                    text = f"The {topic} worker {seed}-{i} retries {rng.randint(1, 9)} times before paging"
                    r = http.post("/v1/memories", json={"kind": "fact", "content": text, "project": PROJECT})
                    if r.status_code == 201:
                        acked.append((r.json()["id"], text))
                elif op == "search":
                    r = http.post(
                        "/v1/search", json={"query": f"how does {topic} retry?", "project": PROJECT}
                    )
                elif op == "list":
                    r = http.get("/v1/memories", params={"project": PROJECT, "limit": 50})
                else:
                    r = http.get("/v1/context", params={"project": PROJECT, "agent": "claude-code"})
                status = r.status_code
            except httpx.HTTPError:
                status = 599  # a dropped connection or a timeout counts as a server error
            timings[op].append((time.perf_counter() - start) * 1000)
            if status >= 500:
                server_errors += 1
            elif status >= 400:
                client_errors += 1
    with lock:
        for op, values in timings.items():
            out["timings"][op].extend(values)
        out["acked"].extend(acked)
        out["server_errors"] += server_errors
        out["client_errors"] += client_errors


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _verify(url: str, key: str, acked: list[tuple[str, str]]) -> tuple[int, int]:
    """Acknowledged writes that cannot be read back, and that search does not find by their own words."""
    unreadable = unfound = 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        for memory_id, _ in acked:
            if http.get(f"/v1/memories/{memory_id}").status_code != 200:
                unreadable += 1
        for memory_id, text in acked[:: max(1, len(acked) // 50)]:  # a sample: search is the slow part
            hits = http.post("/v1/search", json={"query": text, "project": PROJECT, "limit": 5}).json()
            if memory_id not in {h["memory"]["id"] for h in hits.get("hits", [])}:
                unfound += 1
    return unreadable, unfound


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=100, help="per client")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        key = _team(home)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(port)],
            env={**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": str(ROOT / "layers" / "core")},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(600):
                try:
                    if httpx.get(url + "/v1/health", timeout=0.5).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            out: dict = {"timings": defaultdict(list), "acked": [], "server_errors": 0, "client_errors": 0}
            lock = threading.Lock()
            threads = [
                threading.Thread(target=_client_run, args=(url, key, args.requests, seed, out, lock))
                for seed in range(args.clients)
            ]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - start
            unreadable, unfound = _verify(url, key, out["acked"])
        finally:
            server.terminate()
            server.wait(timeout=30)

    every = [v for values in out["timings"].values() for v in values]
    total = len(every)
    print(f"{args.clients} clients × {args.requests} requests on loopback: {total} in {elapsed:.1f} s")
    print(f"{'request':<10} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    rows = {}
    for op, values in sorted(out["timings"].items()) + [("all", every)]:
        p50, p95, p99 = statistics.median(values), _pct(values, 0.95), _pct(values, 0.99)
        rows[op] = {
            "n": len(values),
            "p50_ms": round(p50, 1),
            "p95_ms": round(p95, 1),
            "p99_ms": round(p99, 1),
        }
        print(f"{op:<10} {len(values):>5} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f}")
    print(
        f"throughput {total / elapsed:.1f} req/s; server errors {out['server_errors']}, client errors "
        f"{out['client_errors']}; acknowledged writes {len(out['acked'])}: {unreadable} unreadable, "
        f"{unfound} of a sample not found by search"
    )
    print(
        json.dumps(
            {
                "benchmark": "load",
                "clients": args.clients,
                "requests": total,
                "seconds": round(elapsed, 2),
                "throughput_rps": round(total / elapsed, 1),
                "server_errors": out["server_errors"],
                "client_errors": out["client_errors"],
                "acked_writes": len(out["acked"]),
                "unreadable": unreadable,
                "unfound_sample": unfound,
                "latency": rows,
            }
        )
    )


if __name__ == "__main__":
    main()

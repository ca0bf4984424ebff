"""MCP `recall` over HTTP: the official `mcp` client against `cairn serve` holding N indexed memories.

The store is one team with `--memories` memories (default 10,000) written through the repository and
embedded + indexed in batches by the same `MemoryIndexer` the server uses; the server runs as its own
process. Each sample is one `tools/call recall` round trip on an initialised session (query embedding,
BM25 + k-NN, fusion, hydration, JSON-RPC framing, HTTP). Prints p50/p95 and ends with one JSON line.

    .venv/bin/python benchmarks/mcp_recall.py [--memories 10000] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
import httpx2
from cairn.adapters.embedding import OnnxMiniLmEmbedder
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import (
    SqliteMemoryRepository,
    SqliteRelationRepository,
    SqliteTeamRepository,
)
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.ids import new_id
from cairn.domain.models import Memory, MemoryKind, content_hash
from cairn.services.indexing import MemoryIndexer
from cairn.services.keys import KeyService
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

PROJECT = "github.com/acme/shop"
TOPICS = ["payments", "auth", "search", "billing", "deploys", "caching", "queues", "logging", "migrations"]
VERBS = ["uses", "needs", "breaks without", "was moved to", "is configured by", "is tested with"]
QUERIES = [
    "which port does the payments service use?",
    "how do we deploy the billing worker",
    "what breaks the search indexer",
    "where is the cache configured?",
    "which queue does auth publish to",
    "how are migrations run in staging",
]


def populate(home: Path, n: int) -> str:
    db = SqliteDatabase(home / "cairn.db")
    try:
        _, _, secret = KeyService(SqliteTeamRepository(db)).create_team("bench", "dev")
        team_id = KeyService(SqliteTeamRepository(db)).authenticate(secret).team_id
        repo = SqliteMemoryRepository(db)
        SqliteRelationRepository(db)
        indexer = MemoryIndexer(SqliteSearchIndex(db), OnnxMiniLmEmbedder(), batch_size=128)
        batch: list[Memory] = []
        for i in range(n):
            topic, verb = TOPICS[i % len(TOPICS)], VERBS[i % len(VERBS)]
            text = f"The {topic} service {verb} component {i % 211} on port {8000 + i % 997} (note {i})"
            kind = [MemoryKind.FACT, MemoryKind.DECISION, MemoryKind.PATTERN, MemoryKind.EPISODE][i % 4]
            m = Memory(
                id=new_id("mem"),
                team_id=team_id,
                kind=kind,
                content=text,
                project=PROJECT,
                content_hash=content_hash(kind, text),
            )
            repo.add(m)
            batch.append(m)
            if len(batch) == 512:
                indexer.index(batch)
                batch = []
        if batch:
            indexer.index(batch)
        return secret
    finally:
        db.close()


async def measure(url: str, key: str, calls: int) -> list[float]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for q in QUERIES:  # warm-up: model session, caches
            await session.call_tool("recall", {"query": q, "project": PROJECT, "limit": 10})
        samples = []
        for i in range(calls):
            start = time.perf_counter()
            result = await session.call_tool(
                "recall", {"query": QUERIES[i % len(QUERIES)], "project": PROJECT, "limit": 10}
            )
            samples.append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result
        return samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--port", type=int, default=8797)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        t0 = time.perf_counter()
        secret = populate(home, args.memories)
        print(f"populated {args.memories} memories (embedded + indexed) in {time.perf_counter() - t0:.0f} s")
        env = {**os.environ, "CAIRN_HOME": str(home)}
        server = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(args.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{args.port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(url + "/v1/health", timeout=0.5).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            samples = sorted(anyio.run(measure, url, secret, args.calls))
        finally:
            server.terminate()
            server.wait(timeout=10)
    p50 = statistics.median(samples)
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    print(
        f"MCP recall over HTTP, {args.memories} memories, {len(samples)} calls: "
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {samples[-1]:.1f} ms"
    )
    print(
        json.dumps(
            {
                "memories": args.memories,
                "calls": len(samples),
                "p50_ms": round(p50, 1),
                "p95_ms": round(p95, 1),
            }
        )
    )


if __name__ == "__main__":
    main()

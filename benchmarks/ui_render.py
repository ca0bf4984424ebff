"""Web UI page render time, server side, with 10,000 memories: p50 / p95 per page.

The store is one team with `--memories` memories (default 10,000) over five projects and every kind,
written straight to SQLite with a random unit vector each (so hybrid search runs both legs at full size;
ranking quality is not measured here), plus 200 sessions with pipeline stats. The real app is driven
in-process through Starlette's TestClient with a signed-in session cookie, so each figure is the
server's time to authenticate the cookie, call the services and render the page (no browser, no
network). The query embedding of the search page runs the real ONNX model. The overview's counts by
project and kind scan every memory the member can see; they are kept 30 s per member, so it is
measured both ways.

    .venv/bin/python benchmarks/ui_render.py [--memories 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import (
    SqliteMemoryRepository,
    SqliteRelationRepository,
    SqliteSessionRepository,
    SqliteTeamRepository,
)
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.domain.ids import new_id
from cairn.domain.models import IndexedMemory, Memory, MemoryKind, Provenance, Scope, Session, content_hash
from cairn.services.keys import KeyService
from cairn.settings import Settings
from fastapi.testclient import TestClient

PROJECTS = [f"github.com/acme/service-{i}" for i in range(5)]
KINDS = [
    MemoryKind.PREFERENCE,
    MemoryKind.PATTERN,
    MemoryKind.PROCEDURE,
    MemoryKind.DECISION,
    MemoryKind.FACT,
]
DIM = 384


def populate(home: Path, n: int) -> tuple[str, str, str]:
    """One team, `n` memories (indexed, random vectors), 200 sessions; returns key, memory, session."""
    db = SqliteDatabase(home / "cairn.db")
    rng = np.random.default_rng(7)
    try:
        keys = KeyService(SqliteTeamRepository(db))
        team, _, secret = keys.create_team("bench", "dev")
        repo = SqliteMemoryRepository(db)
        SqliteRelationRepository(db)
        sessions = SqliteSessionRepository(db)
        index = SqliteSearchIndex(db)
        now = datetime.now(UTC)
        session_ids = [f"bench-session-{i:03d}" for i in range(200)]
        batch: list[IndexedMemory] = []
        sample = ""
        for i in range(n):
            kind = KINDS[i % len(KINDS)]
            team_wide = i % 50 == 0
            content = (
                f"Memory {i}: when touching module_{i % 97} of the payments service keep the {i % 13} "
                "invariants; " + "details " * (5 + i % 40)
            )
            memory = Memory(
                id=new_id("mem"),
                team_id=team.id,
                kind=kind,
                content=content,
                scope=Scope.TEAM if team_wide else Scope.PROJECT,
                project=None if team_wide else PROJECTS[i % len(PROJECTS)],
                tags=("error",) if i % 211 == 0 else ("bench",),
                pinned=i % 500 == 0,
                provenance=Provenance(
                    session_id=session_ids[i % 200],
                    line_start=i % 300,
                    line_end=i % 300 + 4,
                    agent="claude-code",
                ),
                created_at=now - timedelta(minutes=n - i),
                content_hash=content_hash(kind, content),
            )
            repo.add(memory)
            vector = rng.standard_normal(DIM).astype(np.float32)
            batch.append(
                IndexedMemory(memory=memory, vector=tuple(float(x) for x in vector / np.linalg.norm(vector)))
            )
            if len(batch) == 500:
                index.upsert(batch)
                batch = []
            sample = memory.id
        if batch:
            index.upsert(batch)
        for i, sid in enumerate(session_ids):
            sessions.put(
                Session(
                    id=sid,
                    team_id=team.id,
                    project=PROJECTS[i % len(PROJECTS)],
                    agent="claude-code",
                    member="dev",
                    started_at=now - timedelta(hours=i + 1),
                    ended_at=now - timedelta(hours=i),
                    transcript_keys=(f"transcripts/{team.id}/{sid}/part-1.jsonl.gz",),
                    status="learned",
                    stats={
                        "parse": {"parts": 1, "events": 120},
                        "chunk": {"chunks": 3},
                        "extract": {"candidates": 14, "extractors": ["rules"], "queued_for_llm": 0},
                        "consolidate": {
                            "created": 6,
                            "merged": 4,
                            "superseded": 1,
                            "relations": 3,
                            "promoted": 0,
                        },
                        "reflect": {"reflection_id": None, "handoff_id": None, "procedures": 1},
                    },
                )
            )
        return secret, sample, session_ids[0]
    finally:
        db.close()


def summary(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "cairn-home"
        home.mkdir()
        t0 = time.perf_counter()
        secret, memory_id, session_id = populate(home, args.memories)
        print(f"populated {args.memories} memories in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        container = build_container(Settings(mode="local", home=home))
        pages = {
            "overview (counters kept on write)": "/ui/",
            "memories (first page)": "/ui/memories",
            "memories (project + kind filter)": f"/ui/memories?project={PROJECTS[1]}&kind=decision",
            "memories (hybrid search)": "/ui/memories?q=payments+module_42+invariants",
            "memory": f"/ui/memories/{memory_id}",
            "sessions": "/ui/sessions",
            "session": f"/ui/sessions/{session_id}",
            "context preview": f"/ui/context?project={PROJECTS[0]}&agent=claude-code",
            "keys": "/ui/keys",
        }
        results: dict[str, dict[str, float]] = {}
        try:
            with TestClient(
                create_app(container), base_url="http://127.0.0.1", follow_redirects=False
            ) as client:
                login = client.get("/ui/login")
                csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)  # type: ignore[union-attr]
                signed_in = client.post("/ui/login", data={"csrf": csrf, "key": secret})
                assert signed_in.status_code == 303, signed_in.text
                for label, path in pages.items():
                    for _ in range(3):  # warm caches, the embedder and the templates
                        assert client.get(path).status_code == 200, path
                    ms = []
                    for _ in range(args.runs):
                        start = time.perf_counter()
                        response = client.get(path)
                        ms.append((time.perf_counter() - start) * 1000)
                        assert response.status_code == 200, path
                    p50, p95 = summary(ms)
                    results[label] = {"p50_ms": round(p50, 1), "p95_ms": round(p95, 1)}
        finally:
            container.close()

    print(f"\nWeb UI server render time, {args.memories} memories, {args.runs} runs per page (TestClient)\n")
    print("| page | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for label, r in results.items():
        print(f"| {label} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} |")
    print(
        json.dumps({"benchmark": "ui_render", "memories": args.memories, "runs": args.runs, "pages": results})
    )


if __name__ == "__main__":
    main()

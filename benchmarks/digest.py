"""The digest's latency over a long-lived project: p50 / p95 of `DigestService.digest` on SQLite.

One project of `--sessions` sessions (default 200), each with 12 learned memories (decisions, facts,
procedures, preferences, an open to-do, a handoff) and 60 transcript excerpts, written through
MemoryService without an index (the digest reads the repository only). Every fourth session supersedes
a fact of the one before it and closes its to-do (`details.closed_by`), as the dream pass does. Timed:
the last 5 sessions, the last 50, and everything since a date 30 sessions back, each `--runs` times,
with the token count of the text (the real WordPiece count).

    .venv/bin/python benchmarks/digest.py [--sessions 200] [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import (
    SqliteMemoryRepository,
    SqliteRelationRepository,
    SqliteSessionRepository,
)
from cairn.domain.models import KeyScope, MemoryKind, Principal, Provenance, Session
from cairn.services.digest import DigestService
from cairn.services.memories import MemoryService, NewMemory

PROJECT = "github.com/acme/long-lived"
CALLER = Principal("team_bench", "dev", "key_bench", frozenset({KeyScope.WRITE}))
START = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
LEARNED = [MemoryKind.DECISION, MemoryKind.FACT, MemoryKind.PROCEDURE, MemoryKind.PREFERENCE]


def build(path: Path, sessions: int) -> tuple[SqliteDatabase, DigestService, int]:
    db = SqliteDatabase(path)
    repo, session_repo = SqliteMemoryRepository(db), SqliteSessionRepository(db)
    memories = MemoryService(repo, SqliteRelationRepository(db))
    written = 0
    previous: dict[str, str] = {}
    for n in range(sessions):
        sid = f"bench-sess-{n:04d}"
        when = START + timedelta(hours=8 * n)
        session_repo.put(
            Session(
                sid, CALLER.team_id, PROJECT, "claude-code", member="dev", started_at=when, status="learned"
            )
        )
        prov = Provenance(session_id=sid, agent="claude-code")
        batch = [
            NewMemory(
                kind=LEARNED[i % 4],
                content=f"Session {n} item {i}: the service keeps value {n * 31 + i}",
                project=PROJECT,
                title=f"Item {i} of session {n}",
                provenance=prov,
            )
            for i in range(10)
        ]
        batch.append(
            NewMemory(
                kind=MemoryKind.EPISODE,
                content=f"To do from session {n}: wire part {n}",
                project=PROJECT,
                tags=("open",),
                provenance=prov,
            )
        )
        batch.append(
            NewMemory(
                kind=MemoryKind.HANDOFF,
                content=f"Last request: finish part {n}\nNext steps: part {n + 1}",
                project=PROJECT,
                details={"reported": [f"Wired `part{n}.go`"]},
                provenance=prov,
            )
        )
        batch += [
            NewMemory(
                kind=MemoryKind.EXCERPT,
                content=f"user: step {j} of session {n}\n$ make test\n  → ok {j}",
                project=PROJECT,
                provenance=replace(prov, line_start=j),
            )
            for j in range(60)
        ]
        saved = memories.remember_many(CALLER, batch)
        written += len(batch)
        if n % 4 == 3 and previous:
            memories.supersede(
                CALLER,
                previous["fact"],
                NewMemory(
                    kind=MemoryKind.FACT,
                    content=f"Session {n} changed the value to {n}",
                    project=PROJECT,
                    provenance=prov,
                ),
            )
            old = repo.get(CALLER.team_id, previous["todo"])
            repo.put(replace(old, details={"closed_by": sid, "evidence": f"commit {n:07x}"}))
            written += 1
        previous = {
            "fact": next(m.id for m in saved if m.kind is MemoryKind.FACT),
            "todo": next(m.id for m in saved if m.kind is MemoryKind.EPISODE),
        }
    return db, DigestService(repo, session_repo), written


def timed(runs: int, call) -> tuple[float, float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)], result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        db, service, written = build(Path(tmp) / "cairn.db", args.sessions)
        print(
            f"store: {args.sessions} sessions, {written} memories in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
        since = START + timedelta(hours=8 * (args.sessions - 30))
        cases = {
            "last_5": lambda: service.digest(CALLER, PROJECT, sessions=5),
            "last_50": lambda: service.digest(CALLER, PROJECT, sessions=50),
            "since_30_back": lambda: service.digest(CALLER, PROJECT, since=since),
        }
        figures = {}
        service.digest(CALLER, PROJECT, sessions=1)  # loads the tokenizer
        for name, call in cases.items():
            p50, p95, d = timed(args.runs, call)
            figures[name] = {
                "p50_ms": round(p50, 1),
                "p95_ms": round(p95, 1),
                "tokens": d.tokens,
                "sessions": len(d.sessions),
                "changed": sum(len(s.changed) for s in d.sessions),
                "closed": sum(len(s.closed) for s in d.sessions),
            }
            print(
                f"{name:14} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  {d.tokens} tokens  "
                f"{len(d.sessions)} sessions",
                file=sys.stderr,
            )
        db.close()
    print(json.dumps({"benchmark": "digest", "sessions": args.sessions, "memories": written, **figures}))


if __name__ == "__main__":
    main()

"""Scale benchmark: one team at 10k, 100k (and 1M) records of coding-session text, local mode.

For each size N: build a store (SQLite memories + the local search index) of N synthetic records (see
`scale_corpus.py`: ~60 % transcript excerpts, the rest memories, 12 projects, Zipf-distributed words),
then in a *fresh process* (what `cairn serve` would be after a restart) recall `--queries` questions with
the project filter and `limit=20` through `RecallService` with its defaults, query embedding included,
`--rounds` times. Reported per N: recall p50/p95 (first round and best of the rounds per question), each
leg's own time (query embedding, lexical, vector, and the rest: fusion, hydration, feedback, access
recording), index size on disk, the recall process's RSS (current and peak), build throughput (records/s,
vectors pre-computed) and, for the smallest N, reindex throughput with the real embedder on every core.
Ends with one JSON line.

Fragment embeddings are computed once with the real model and cached under `--scratch` (default
.bench-cache/scale, git-ignored), as are the built stores (`--rebuild` forces a new one).

    .venv/bin/python benchmarks/scale.py --sizes 10000,100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path

import numpy as np
import scale_corpus as corpus
from _paths import REPO
from cairn.adapters.cached_embedder import CachingEmbedder
from cairn.adapters.embedding import OnnxMiniLmEmbedder
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import (
    SqliteMemoryRepository,
    SqliteRelationRepository,
    SqliteTeamRepository,
)
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.models import (
    IndexedMemory,
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    Scope,
    Team,
    content_hash,
    vector_key,
)
from cairn.services.indexing import MemoryIndexer
from cairn.services.recall import RecallService
from cairn.services.reindex import ReindexService

POOL = 30_000  # distinct fragments, embedded once
TEAM = "team_scale"
# recall as a member who owns none of the corpus's personal memories (they are alice's)
READER = Principal(TEAM, "bench", "key_bench", frozenset({KeyScope.READ}))
BUILD_BATCH = 2_000


def pct(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


# -- fragments and stores ---------------------------------------------------------------------------


def pool_vectors(scratch: Path, pool: list[str]) -> np.ndarray:
    embedder = OnnxMiniLmEmbedder(threads=os.cpu_count() or 1)
    path = scratch / f"fragments-{POOL}-{embedder.version}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.perf_counter()
    vectors = np.asarray(embed_bulk(embedder, pool), dtype=np.float32)
    print(f"embedded {len(pool)} fragments in {time.perf_counter() - t0:.0f} s", flush=True)
    np.save(path, vectors)
    return vectors


def embed_bulk(embedder, texts: list[str]) -> list[list[float]]:
    bulk = getattr(embedder, "embed_bulk", None)
    return bulk(texts) if bulk else embedder.embed(texts)


def build(path: Path, n: int, pool: list[str], vectors: np.ndarray) -> dict:
    """Write n records through the repository and the index in batches of one transaction each."""
    final, path = path, path.with_name(path.name + ".building")  # renamed when whole: a killed
    for suffix in ("", "-wal", "-shm"):  # build never leaves a store that looks finished
        Path(f"{path}{suffix}").unlink(missing_ok=True)
        Path(f"{final}{suffix}").unlink(missing_ok=True)
    db = SqliteDatabase(path)
    memories, index = SqliteMemoryRepository(db), SqliteSearchIndex(db)
    SqliteTeamRepository(db).add_team(Team(id=TEAM, name="scale", created_at=datetime.now(UTC)))
    recs = corpus.records(n, len(pool))
    start = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=365) / max(n, 1)
    t0 = time.perf_counter()
    for lo in range(0, n, BUILD_BATCH):
        docs = []
        for i in range(lo, min(n, lo + BUILD_BATCH)):
            memory = _memory(i, recs[i], pool, start + step * i)
            docs.append(
                IndexedMemory(
                    memory=memory,
                    vector=tuple(corpus.vector_of(recs[i], vectors)),
                    # keyed as the model's vector of the text, so a reindex finds it as it would a real one
                    text_key=vector_key(OnnxMiniLmEmbedder.version, memory.search_text()),
                )
            )
        with db.transaction():
            for d in docs:
                memories.add(d.memory)
            index.upsert(docs)
    seconds = time.perf_counter() - t0
    with db.read() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    os.replace(path, final)
    return {"build_s": seconds, "build_per_s": n / seconds}


def _memory(i: int, rec: corpus.Record, pool: list[str], at: datetime) -> Memory:
    kind = MemoryKind(rec.kind)
    text = corpus.text_of(rec, pool)
    return Memory(
        id=f"mem_{i:012d}",
        team_id=TEAM,
        kind=kind,
        content=text,
        scope=Scope(rec.scope),
        project=rec.project,
        owner=rec.owner,
        title=rec.title,
        provenance=Provenance(session_id=f"ses_{rec.session:08d}", agent="claude-code"),
        created_at=at,
        updated_at=at,
        valid_from=at,
        content_hash=content_hash(kind, text),
    )


def disk_size(path: Path) -> dict:
    """Bytes of the whole store, and of the search index's tables (SQLite's dbstat) plus sidecars."""
    total = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    sidecar = sum(
        p.stat().st_size
        for p in path.parent.glob(path.name + ".*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    )
    index = None
    db = SqliteDatabase(path)
    try:
        with db.read() as conn:
            row = conn.execute(
                "SELECT sum(pgsize) FROM dbstat"
                " WHERE name LIKE 'search%' OR name LIKE 'sqlite_autoindex_search%'"
            ).fetchone()
            index = (row[0] or 0) + sidecar
    except Exception:  # noqa: BLE001 - SQLite built without dbstat
        index = None
    finally:
        db.close()
    return {"store_mb": total / 1e6, "index_mb": None if index is None else index / 1e6}


# -- the recall process -------------------------------------------------------------------------------


class _TimedIndex:
    """Times each leg of the index: lexical-only and vector-only calls are what RecallService makes."""

    def __init__(self, inner) -> None:
        self.inner, self.lexical, self.vector = inner, [], []

    def search(self, team_id, query_text, query_vector, flt, k_lexical, k_semantic):
        t0 = time.perf_counter()
        out = self.inner.search(team_id, query_text, query_vector, flt, k_lexical, k_semantic)
        (self.vector if query_vector is not None else self.lexical).append((time.perf_counter() - t0) * 1e3)
        return out

    def __getattr__(self, name):
        return getattr(self.inner, name)


class _TimedEmbedder:
    def __init__(self, inner) -> None:
        self.inner, self.times = inner, []
        self.version, self.dimension = inner.version, inner.dimension

    def embed(self, texts):
        return self.inner.embed(texts)

    def embed_query(self, text):
        t0 = time.perf_counter()
        out = self.inner.embed_query(text)
        self.times.append((time.perf_counter() - t0) * 1e3)
        return out


def rss_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def recall_run(path: Path, n: int, queries: int, rounds: int) -> dict:
    """In this (fresh) process: open the store, recall, time the legs."""
    pool = corpus.fragment_pool(POOL)
    recs = corpus.records(n, len(pool))
    rng = random.Random(5)
    targets = [rng.randrange(n) for _ in range(queries)]
    asks = [(corpus.query_for(recs[t], pool, rng), recs[t].project or corpus.PROJECTS[0]) for t in targets]
    db = SqliteDatabase(path)
    index = _TimedIndex(SqliteSearchIndex(db))
    embedder = _TimedEmbedder(OnnxMiniLmEmbedder())
    service = RecallService(SqliteMemoryRepository(db), index, embedder, SqliteRelationRepository(db))
    t0 = time.perf_counter()
    service.recall(READER, "warm up the model and open the index", MemoryFilter(project=asks[0][1]), 20)
    first_query_s = time.perf_counter() - t0
    for q, project in asks[:10]:
        service.recall(READER, q, MemoryFilter(project=project), limit=20)
    index.lexical.clear(), index.vector.clear(), embedder.times.clear()
    wall = np.full((rounds, len(asks)), np.nan)
    found = 0
    load = [os.getloadavg()[0]]
    for r in range(rounds):
        for i, (q, project) in enumerate(asks):
            t0 = time.perf_counter()
            result = service.recall(READER, q, MemoryFilter(project=project), limit=20)
            wall[r, i] = (time.perf_counter() - t0) * 1e3
            if r == 0:
                found += any(h.memory.id == f"mem_{targets[i]:012d}" for h in result.hits)
    load.append(os.getloadavg()[0])
    overlap = ann_overlap(index.inner, embedder.inner, asks[:50])
    first = len(asks)  # the legs of the first round
    lex, vec, emb = index.lexical[:first], index.vector[:first], embedder.times[:first]
    rest = [w - max(e, lx) - v for w, e, lx, v in zip(wall[0], emb, lex, vec, strict=False)]
    rss, peak = rss_mb()
    return {
        "n": n,
        "p50_ms": pct(wall[0], 50),
        "p95_ms": pct(wall[0], 95),
        "best_p50_ms": pct(wall.min(axis=0), 50),
        "best_p95_ms": pct(wall.min(axis=0), 95),
        "embed_p50_ms": pct(emb, 50),
        "embed_p95_ms": pct(emb, 95),
        "lexical_p50_ms": pct(lex, 50),
        "lexical_p95_ms": pct(lex, 95),
        "vector_p50_ms": pct(vec, 50),
        "vector_p95_ms": pct(vec, 95),
        "rest_p50_ms": pct(rest, 50),
        "rest_p95_ms": pct(rest, 95),
        "first_query_s": first_query_s,
        "target_in_top20": found / len(asks),
        "knn_top100_overlap_exact": overlap,
        "rss_mb": rss,
        "peak_rss_mb": peak,
        "load": sum(load) / len(load),
    }


def ann_overlap(index: SqliteSearchIndex, embedder, asks) -> float | None:
    """How much of the exact k-NN top 100 the view's approximate one (`search_ivf`) keeps, over these
    questions; None when the team is small enough to be scanned exactly."""
    view = index._view(TEAM)
    centroids = getattr(view, "centroids", None)  # a tree without them: exact
    if centroids is None:
        return None
    kept = []
    for q, project in asks:
        vector = np.asarray(embedder.embed_query(q), dtype=np.float32)
        flt = MemoryFilter(project=project)
        approximate = {m for m, _ in view.knn(vector, flt, 100)}
        view.centroids = None
        exact = {m for m, _ in view.knn(vector, flt, 100)}
        view.centroids = centroids
        kept.append(len(approximate & exact) / max(1, len(exact)))
    return float(np.mean(kept))


def _copy(path: Path, name: str) -> Path:
    copy = path.with_name(f"{name}-{path.name}")
    for suffix in ("", "-wal", "-shm", ".tmp"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    source = SqliteDatabase(path)
    with source.read() as conn:
        conn.execute("VACUUM INTO ?", (str(copy) + ".tmp",))
    source.close()
    os.replace(str(copy) + ".tmp", copy)
    return copy


def reindex_run(path: Path, sample: int) -> dict:
    """`cairn reindex` of the whole store (a copy) as local mode wires it: the model unchanged, so every
    vector is found under its key and nothing is embedded; then the model's own bulk throughput on
    `sample` record texts, on every core, for a reindex after a model change."""
    copy = _copy(path, "reindex")
    db = SqliteDatabase(copy)
    memories, index = SqliteMemoryRepository(db), SqliteSearchIndex(db)
    model = OnnxMiniLmEmbedder()
    embedder = CachingEmbedder(model, index)

    class _Teams:
        def list_teams(self):
            return [Team(id=TEAM, name="scale", created_at=datetime.now(UTC))]

    service = ReindexService(_Teams(), memories, index, MemoryIndexer(index, embedder))
    t0 = time.perf_counter()
    report = service.rebuild()
    seconds = time.perf_counter() - t0
    texts = [m.search_text() for m in islice(memories.iter_team(TEAM), sample)]
    db.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    model.embed(["load the model first"])
    t1 = time.perf_counter()
    model.embed(texts)
    embed_s = time.perf_counter() - t1
    return {
        "reindex_records": report.memories,
        "reindex_s": seconds,
        "reindex_per_s": report.memories / seconds,
        "reindex_embedded": embedder.embedded,
        "embed_texts": len(texts),
        "embed_per_s": len(texts) / embed_s,
    }


def serve_rss(path: Path, n: int, queries: int) -> dict:
    """Peak RSS of a real `cairn serve` over (a copy of) the store, after `queries` recalls over HTTP."""
    import httpx
    from cairn.services.keys import KeyService

    home = path.parent / f"serve-home-{n}"
    home.mkdir(exist_ok=True)
    db_path = _copy(path, "serve")
    os.replace(db_path, home / "cairn.db")
    db = SqliteDatabase(home / "cairn.db")
    _, secret = KeyService(SqliteTeamRepository(db))._issue(
        TEAM, "bench", "bench", frozenset({KeyScope.READ, KeyScope.WRITE}), None
    )
    db.close()
    port = 18000 + n % 1000
    env = {**os.environ, "CAIRN_HOME": str(home)}
    env.pop("CAIRN_MODE", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 120:
            try:
                if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        ready_s = time.perf_counter() - t0
        pool = corpus.fragment_pool(POOL)
        recs = corpus.records(n, len(pool))
        rng = random.Random(9)
        headers = {"Authorization": f"Bearer {secret}"}
        t1 = time.perf_counter()
        for _ in range(queries):
            rec = recs[rng.randrange(n)]
            body = {
                "query": corpus.query_for(rec, pool, rng),
                "project": rec.project or corpus.PROJECTS[0],
                "limit": 20,
            }
            assert httpx.post(f"{url}/v1/search", json=body, headers=headers, timeout=60).status_code == 200
        http_s = time.perf_counter() - t1
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{server.pid}/status").read_text().splitlines()
        )
        return {
            "serve_ready_s": ready_s,
            "serve_http_recall_mean_ms": http_s / queries * 1e3,
            "serve_rss_mb": int(status["VmRSS"].split()[0]) / 1024,
            "serve_peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024,
        }
    finally:
        server.terminate()
        server.wait(30)
        for p in home.glob("cairn.db*"):
            p.unlink()


# -- main -----------------------------------------------------------------------------------------------


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--scratch", type=Path, default=REPO / ".bench-cache" / "scale")
    p.add_argument("--rebuild", action="store_true", help="build the stores even when cached")
    p.add_argument(
        "--reindex-sample", type=int, default=2000, help="texts embedded for throughput; 0: no reindex"
    )
    p.add_argument("--serve", action="store_true", help="also peak RSS of `cairn serve` at each size")
    p.add_argument("--recall-only", type=int, default=0, help=argparse.SUPPRESS)  # the child process
    args = p.parse_args(argv)
    args.scratch.mkdir(parents=True, exist_ok=True)
    if args.recall_only:
        path = args.scratch / f"store-{args.recall_only}.sqlite3"
        print(json.dumps(recall_run(path, args.recall_only, args.queries, args.rounds)))
        return

    sizes = [int(s) for s in args.sizes.split(",")]
    pool = corpus.fragment_pool(POOL)
    vectors = pool_vectors(args.scratch, pool)
    rows = []
    for n in sizes:
        path = args.scratch / f"store-{n}.sqlite3"
        built = {}
        if args.rebuild or not path.exists():
            print(f"building {n} records ...", flush=True)
            built = build(path, n, pool, vectors)
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--recall-only",
                str(n),
                "--queries",
                str(args.queries),
                "--rounds",
                str(args.rounds),
                "--scratch",
                str(args.scratch),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        row = {**built, **json.loads(child.stdout.strip().splitlines()[-1]), **disk_size(path)}
        if args.serve:
            row.update(serve_rss(path, n, args.queries))
            print(
                f"          cairn serve: ready in {row['serve_ready_s']:.1f} s, HTTP recall mean"
                f" {row['serve_http_recall_mean_ms']:.1f} ms, RSS {row['serve_rss_mb']:.0f} MB,"
                f" peak {row['serve_peak_rss_mb']:.0f} MB",
                flush=True,
            )
        rows.append(row)
        _print_row(row)
    reindex = {}
    if args.reindex_sample:
        reindex = reindex_run(args.scratch / f"store-{sizes[-1]}.sqlite3", args.reindex_sample)
        print(
            f"reindex (model unchanged) of {reindex['reindex_records']} records in"
            f" {reindex['reindex_s']:.1f} s = {reindex['reindex_per_s']:.0f} records/s,"
            f" {reindex['reindex_embedded']} texts embedded; re-embedding (model changed):"
            f" {reindex['embed_per_s']:.0f} texts/s on {os.cpu_count()} cores"
            f" (100k: {100_000 / reindex['embed_per_s'] / 60:.0f} min)",
            flush=True,
        )
    for a, b in zip(rows, rows[1:], strict=False):
        f = b["n"] / a["n"]
        print(
            f"growth {a['n']}->{b['n']} (x{f:g}): p95 x{b['p95_ms'] / a['p95_ms']:.2f},"
            f" lexical p50 x{b['lexical_p50_ms'] / a['lexical_p50_ms']:.2f},"
            f" vector p50 x{b['vector_p50_ms'] / a['vector_p50_ms']:.2f},"
            f" peak RSS x{b['peak_rss_mb'] / a['peak_rss_mb']:.2f}"
        )
    print(f"machine: {os.cpu_count()} CPUs, load average now {os.getloadavg()[0]:.2f}")
    out = {
        "rows": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
        **{k: round(v, 2) if isinstance(v, float) else v for k, v in reindex.items()},
        "cpus": os.cpu_count(),
    }
    print(json.dumps(out))


def _print_row(r: dict) -> None:
    build = f" built at {r['build_per_s']:.0f} records/s;" if "build_per_s" in r else ""
    index_mb = "?" if r["index_mb"] is None else f"{r['index_mb']:.0f}"
    print(
        f"{r['n']:>8} records:{build} recall first round p50 {r['p50_ms']:.1f} / p95 {r['p95_ms']:.1f} ms,"
        f" best of rounds p50 {r['best_p50_ms']:.1f} / p95 {r['best_p95_ms']:.1f} ms\n"
        f"          legs p50/p95: embed {r['embed_p50_ms']:.1f}/{r['embed_p95_ms']:.1f},"
        f" lexical {r['lexical_p50_ms']:.1f}/{r['lexical_p95_ms']:.1f},"
        f" vector {r['vector_p50_ms']:.1f}/{r['vector_p95_ms']:.1f},"
        f" rest (fusion, hydration, feedback) {r['rest_p50_ms']:.1f}/{r['rest_p95_ms']:.1f} ms\n"
        f"          store {r['store_mb']:.0f} MB (index {index_mb} MB);"
        f" recall process RSS {r['rss_mb']:.0f} MB,"
        f" peak {r['peak_rss_mb']:.0f} MB; first query after open {r['first_query_s']:.2f} s;"
        f" target in top 20: {r['target_in_top20']:.2f}; k-NN top 100 kept of the exact one:"
        f" {'exact scan' if (kept := r['knn_top100_overlap_exact']) is None else round(kept, 3)};"
        f" load {r['load']:.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()

"""Local model-change reindex: records/s of `cairn reindex` after the model changed, on 1 core and on all.

Builds one team of `--records` synthetic coding-session records (`scale_corpus.py`) whose vectors are
filed under an old model's version (a salted hash, 384-d: the model whose vectors the store serves),
then, on a fresh copy each time, runs the reindex as local mode wires it (`build_container` with the
real MiniLM as the configured model and the old one still loadable) and times it to the swap:

- `1 core`: one ONNX intra-op thread, one batch at a time;
- `all cores, batches in parallel`: one intra-op thread, `os.cpu_count()` batches at once on the one
  session (what `OnnxMiniLmEmbedder` does by default);
- `all cores, intra-op threads`: `os.cpu_count()` intra-op threads, one batch at a time.

Every record is embedded once per run (the new model's vectors cannot be cached). Wall time gives
records/s; process CPU time gives records per CPU-second, which a loaded, shared machine disturbs less
(it shows the work per record, not the speed-up of more cores). Ends with one JSON line.

    .venv/bin/python benchmarks/reindex_local.py --records 5000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import scale_corpus as corpus
from _paths import REPO
from cairn.adapters.embedding import OnnxMiniLmEmbedder
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository, SqliteTeamRepository
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.bootstrap import build_container
from cairn.domain.models import (
    IndexedMemory,
    Memory,
    MemoryKind,
    Provenance,
    Scope,
    Team,
    content_hash,
    vector_key,
)
from cairn.settings import Settings

TEAM = "team_reindex"
OLD = "bench-old-hash-384"


class OldModel:
    """The model the store was embedded with: a salted hash (its vectors only need to be of one model)."""

    version, dimension = OLD, 384

    def embed(self, texts):
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()


def build(home: Path, n: int) -> None:
    db = SqliteDatabase(Settings(mode="local", home=home).db_path)
    memories, index, old = SqliteMemoryRepository(db), SqliteSearchIndex(db), OldModel()
    SqliteTeamRepository(db).add_team(Team(id=TEAM, name="reindex", created_at=datetime.now(UTC)))
    pool = corpus.fragment_pool(2_000)
    start = datetime.now(UTC) - timedelta(days=30)
    docs = []
    for i, rec in enumerate(corpus.records(n, len(pool))):
        kind, text, at = MemoryKind(rec.kind), corpus.text_of(rec, pool), start + timedelta(seconds=i)
        m = Memory(
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
            embedding_version=OLD,
        )
        docs.append(
            IndexedMemory(m, tuple(old.embed_query(m.search_text())), vector_key(OLD, m.search_text()))
        )
    with db.transaction():
        for d in docs:
            memories.add(d.memory)
        index.upsert(docs)
    db.close()


def run(base: Path, scratch: Path, label: str, embedder: OnnxMiniLmEmbedder) -> dict:
    home = scratch / label.replace(" ", "-").replace(",", "")
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(base, home)
    c = build_container(Settings(mode="local", home=home), embedder=embedder, previous=[OldModel()])
    try:
        embedder.embed(["warm up the session"])  # model load is not reindex time
        assert c.reindex.model_change()
        t0, cpu0 = time.perf_counter(), time.process_time()
        report = c.reindex.rebuild()
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert report.swapped and c.indexer._index.active_version() == embedder.version
    finally:
        c.close()
        shutil.rmtree(home, ignore_errors=True)
    per_s, per_cpu_s = report.memories / seconds, report.memories / cpu
    print(
        f"{label}: {report.memories} records in {seconds:.1f} s = {per_s:.1f} records/s"
        f" ({cpu:.1f} CPU-s, {per_cpu_s:.1f} records per CPU-second)",
        flush=True,
    )
    return {
        "label": label,
        "records": report.memories,
        "seconds": round(seconds, 2),
        "per_s": round(per_s, 1),
        "cpu_s": round(cpu, 2),
        "per_cpu_s": round(per_cpu_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=5_000)
    parser.add_argument("--scratch", type=Path, default=REPO / ".bench-cache" / "reindex-local")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    base = args.scratch / f"store-{args.records}"
    if not Settings(mode="local", home=base).db_path.exists():
        shutil.rmtree(base, ignore_errors=True)
        build(base, args.records)
    load = os.getloadavg()[0]
    runs = [
        run(base, args.scratch, "1 core", OnnxMiniLmEmbedder(threads=1, workers=1)),
        run(
            base,
            args.scratch,
            f"all {cores} cores, batches in parallel",
            OnnxMiniLmEmbedder(threads=1, workers=cores),
        ),
        run(
            base,
            args.scratch,
            f"all {cores} cores, intra-op threads",
            OnnxMiniLmEmbedder(threads=cores, workers=1),
        ),
    ]
    summary = {
        "benchmark": "reindex_local",
        "records": args.records,
        "cores": cores,
        "load_before": round(load, 2),
    }
    summary["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps({**summary, "runs": runs}), flush=True)


if __name__ == "__main__":
    sys.exit(main())

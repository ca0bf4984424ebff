"""LoCoMo recall benchmark: the protocol of benchmarks/data/locomo/README.md through Cairn's RecallService.

Each conversation gets its own SQLite store holding one team and one project; every dialog turn is one
"episode" memory written with the SQLite repository and indexed by `MemoryIndexer`, exactly as local
mode does. Each question is one `RecallService.recall(reader, question, project filter, limit=20)` call,
timed end to end (query embedding, both legs, fusion, hydration, access recording).

`--scale N` adds a latency-only run: one team holding every turn of every conversation plus synthetic
paraphrases up to N memories, then the same questions are recalled over that whole team.
Document embeddings are cached on disk under .bench-cache/ (git-ignored); query embeddings are always
computed live unless `--cached-queries` is given (tuning loops), because they are part of the latency.

The LoCoMo data (benchmarks/data/locomo/, CC BY-NC 4.0, see its LICENSE.md) is for benchmarking only and is
never packaged: neither the wheel nor the Lambda layer holds benchmarks/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from _paths import LOCOMO_DEV, REPO
from cairn.adapters.embedding import OnnxMiniLmEmbedder
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository, SqliteRelationRepository
from cairn.adapters.local.search import SqliteSearchIndex
from cairn.domain.ids import new_id
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    content_hash,
)
from cairn.services.indexing import MemoryIndexer
from cairn.services.recall import RecallService, RecallTuning

DEFAULT_DATA = LOCOMO_DEV
CACHE_DIR = REPO / ".bench-cache"
KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


# -- data -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: str
    text: str
    said_at: datetime | None = None  # the session's date, for --dated


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def load(path: Path) -> list[Conversation]:
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = []
        sessions = sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
        )
        for session in sessions:
            date = conv.get(f"{session}_date_time", "")
            for turn in conv[session]:
                text = f"[{date}] {turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], session, text, _session_date(date)))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            if qa["category"] == 5:
                continue
            evidence = frozenset(e for raw in qa.get("evidence", []) for e in _clean(raw) if e in known)
            if evidence:
                questions.append(Question(qa["question"], evidence, qa["category"]))
        out.append(Conversation(sample["sample_id"], tuple(turns), tuple(questions)))
    return out


def _session_date(raw: str) -> datetime | None:
    try:
        return datetime.strptime(raw, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def _clean(raw: str) -> list[str]:
    """'D8:6; D9:17' -> both; 'D:11:26' -> 'D11:26'; 'D30:05' -> 'D30:5'."""
    ids = []
    for part in re.split(r"[;,\s]+", raw.strip()):
        m = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
        if m:
            ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return ids


# -- embeddings cache -----------------------------------------------------------------------------


class CachedEmbedder:
    """Wraps the real embedder with an on-disk cache keyed by model version and text hash."""

    def __init__(self, inner: OnnxMiniLmEmbedder, cache_queries: bool) -> None:
        self.inner = inner
        self.version = inner.version
        self.dimension = inner.dimension
        self._cache_queries = cache_queries
        self._path = CACHE_DIR / f"embeddings-{inner.version}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        if self._path.exists():
            data = np.load(self._path)
            self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}.items())
        if missing:
            vectors = self.inner.embed([t for _, t in missing])
            for (key, _), vector in zip(missing, vectors, strict=True):
                self._vectors[key] = np.asarray(vector, dtype=np.float32)
            self._dirty = True
        return [self._vectors[k].tolist() for k in keys]

    def embed_query(self, text: str) -> list[float]:
        if self._cache_queries:
            return self.embed([text])[0]
        return self.inner.embed_query(text)

    def save(self) -> None:
        if self._dirty:
            CACHE_DIR.mkdir(exist_ok=True)
            keys = np.array(list(self._vectors))
            np.savez(self._path, keys=keys, vectors=np.stack([self._vectors[k] for k in keys]))
            self._dirty = False


# -- stores ---------------------------------------------------------------------------------------


@dataclass
class Store:
    db: SqliteDatabase
    memories: SqliteMemoryRepository
    index: SqliteSearchIndex
    relations: SqliteRelationRepository
    team_id: str
    project: str
    dia_of: dict[str, str]  # memory id -> dia id
    now: datetime  # the clock recall runs at: just after the last write

    @property
    def reader(self) -> Principal:
        """Who recalls: a member of the store's team with a read key."""
        return Principal(self.team_id, "reader", "key_reader", frozenset({KeyScope.READ}))


def build_store(
    path: Path, sample_id: str, turns: Sequence[Turn], embedder: CachedEmbedder, dated: bool = False
) -> Store:
    db = SqliteDatabase(path)
    store = Store(
        db=db,
        memories=SqliteMemoryRepository(db),
        index=SqliteSearchIndex(db),
        relations=SqliteRelationRepository(db),
        team_id=new_id("team"),
        project=f"locomo/{sample_id}",
        dia_of={},
        now=datetime.now(UTC),
    )
    start = datetime.now(UTC) - timedelta(seconds=len(turns))
    batch = []
    for i, turn in enumerate(turns):
        at = start + timedelta(seconds=i)  # written in conversation order, a second apart
        if dated and turn.said_at is not None:
            at = turn.said_at + timedelta(seconds=i)
        memory = Memory(
            id=new_id("mem"),
            team_id=store.team_id,
            kind=MemoryKind.EPISODE,
            content=turn.text,
            project=store.project,
            provenance=Provenance(session_id=f"{sample_id}/{turn.session}", agent="locomo"),
            created_at=at,
            updated_at=at,
            valid_from=at,
            content_hash=content_hash(MemoryKind.EPISODE, turn.text),
            embedding_version=embedder.version,
        )
        store.memories.add(memory)
        store.dia_of[memory.id] = turn.dia_id
        batch.append(memory)
    MemoryIndexer(store.index, embedder).index(batch)
    store.now = max(m.created_at for m in batch) + timedelta(days=1) if dated else datetime.now(UTC)
    return store


def build_stores(
    convs: Sequence[Conversation], tmp: Path, embedder: CachedEmbedder, dated: bool
) -> dict[str, Store]:
    folder = Path(tempfile.mkdtemp(dir=tmp))
    return {
        c.sample_id: build_store(folder / f"{c.sample_id}.sqlite3", c.sample_id, c.turns, embedder, dated)
        for c in convs
    }


# -- evaluation -----------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if len(values) else float("nan")


def evaluate(
    convs: Sequence[Conversation], stores: dict[str, Store], embedder: CachedEmbedder, tuning: RecallTuning
) -> dict:
    per_cat: dict[int, list[list[float]]] = defaultdict(list)
    latencies = []
    for conv in convs:
        store = stores[conv.sample_id]
        service = RecallService(
            store.memories, store.index, embedder, store.relations, clock=lambda s=store: s.now, tuning=tuning
        )
        flt = MemoryFilter(project=store.project)
        for q in conv.questions:
            t0 = time.perf_counter()
            result = service.recall(store.reader, q.text, flt, limit=max(KS))
            latencies.append((time.perf_counter() - t0) * 1000)
            ranked = [store.dia_of.get(h.memory.id) for h in result.hits]
            per_cat[q.category].append([len(q.evidence & set(ranked[:k])) / len(q.evidence) for k in KS])
    everything = [row for rows in per_cat.values() for row in rows]
    return {
        "n": len(everything),
        "overall": np.mean(everything, axis=0).tolist(),
        "per_category": {
            c: (len(rows), np.mean(rows, axis=0).tolist()) for c, rows in sorted(per_cat.items())
        },
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
    }


def print_report(title: str, report: dict) -> None:
    print(f"\n{title}  ({report['n']} questions)")
    print(f"  {'':<14}{'n':>5}  " + "  ".join(f"R@{k:<4}" for k in KS))
    for cat, (n, values) in report["per_category"].items():
        print(f"  {CATEGORIES[cat]:<14}{n:>5}  " + "  ".join(f"{v:.3f} " for v in values))
    print(f"  {'overall':<14}{report['n']:>5}  " + "  ".join(f"{v:.3f} " for v in report["overall"]))
    print(f"  recall latency p50 {report['p50_ms']:.1f} ms, p95 {report['p95_ms']:.1f} ms")


# -- scale run ------------------------------------------------------------------------------------

_FRAMES = (
    "{speaker} mentioned that {text}",
    "Recap: {speaker} talked about {text}",
    "Earlier {speaker} said {text}",
    "Note from a chat with {speaker}: {text}",
)


def synthetic(turns: Sequence[Turn], count: int, seed: int = 7) -> list[str]:
    """Paraphrase-like fillers: a turn's words, partly spliced with another turn's, in a new frame."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        a, b = rng.choice(turns), rng.choice(turns)
        speaker, _, words = a.text.partition("] ")[2].partition(": ")
        left, right = words.split(), b.text.partition(": ")[2].split()
        cut_a, cut_b = len(left) // 2 + 1, len(right) // 2
        text = " ".join(left[:cut_a] + right[cut_b:])
        out.append(rng.choice(_FRAMES).format(speaker=speaker, text=text))
    return out


def scale_run(
    convs: Sequence[Conversation],
    n: int,
    tmp: Path,
    embedder: CachedEmbedder,
    tuning: RecallTuning,
    rounds: int,
) -> dict:
    """Recall latency over one team of `n` memories: every turn of every conversation plus fillers.

    Every question is recalled once per round. The first round gives the plain figures; the best of
    the rounds per question approximates the latency without other jobs preempting this process on a
    shared machine (it also finds the feedback step's analysis cache warmer, worth < 1 ms).
    """
    turns = [t for c in convs for t in c.turns]
    fillers = [Turn(f"S{i}", "synthetic", text) for i, text in enumerate(synthetic(turns, n - len(turns)))]
    store = build_store(tmp / "scale.sqlite3", "all", turns + fillers, embedder)
    service = RecallService(store.memories, store.index, embedder, store.relations, tuning=tuning)
    flt = MemoryFilter(project=store.project)
    questions = [q.text for c in convs for q in c.questions]
    for q in questions[:20]:  # warm-up: the first query builds the vector matrix, first pages load
        service.recall(store.reader, q, flt, limit=20)
    wall = np.full((rounds, len(questions)), np.nan)
    cpu = np.full((rounds, len(questions)), np.nan)
    load_before = os.getloadavg()[0]
    for r in range(rounds):
        for i, q in enumerate(questions):
            t0, c0 = time.perf_counter(), time.process_time()
            service.recall(store.reader, q, flt, limit=20)
            wall[r, i] = (time.perf_counter() - t0) * 1000
            cpu[r, i] = (time.process_time() - c0) * 1000
    load = (load_before + os.getloadavg()[0]) / 2
    embed, search = [], []
    for q in questions[:200]:  # the parts, timed apart from the end-to-end figures above
        t0 = time.perf_counter()
        vector = embedder.embed_query(q)
        t1 = time.perf_counter()
        store.index.search(store.team_id, q, vector, flt, tuning.k_lexical, tuning.k_semantic)
        embed.append((t1 - t0) * 1000)
        search.append((time.perf_counter() - t1) * 1000)
    best = wall.min(axis=0)
    return {
        "memories": len(turns) + len(fillers),
        "recall_p50_ms": percentile(wall[0], 50),
        "recall_p95_ms": percentile(wall[0], 95),
        "cpu_p50_ms": percentile(cpu[0], 50),
        "cpu_p95_ms": percentile(cpu[0], 95),
        "best_p50_ms": percentile(best, 50),
        "best_p95_ms": percentile(best, 95),
        "embed_p50_ms": percentile(embed, 50),
        "index_search_p50_ms": percentile(search, 50),
        "load": load,
    }


# Each variant changes the defaults of RecallTuning; "_dated" writes memories at their session's date.
ABLATIONS: dict[str, dict] = {
    "textbook RRF (k=60), no feedback": {"rrf_k": 60.0, "prf_weight": 0.0},
    "no feedback": {"prf_weight": 0.0},
    "lexical leg only": {"semantic_weight": 0.0, "prf_weight": 0.0},
    "semantic leg only": {"lexical_weight": 0.0, "prf_weight": 0.0},
    "feedback weight 1.0": {"prf_weight": 1.0},
    "feedback pool 100": {"pool": 100},
    "feedback from 3 docs": {"prf_docs": 3},
    "access boost 0.02": {"access_weight": 0.02},
    "dated memories, recency floor 0.95 (default)": {"_dated": True},
    "dated memories, recency floor 0.8": {"_dated": True, "recency_floor": 0.8},
    "dated memories, recency decay off": {"_dated": True, "recency_floor": 1.0},
}


# -- main -----------------------------------------------------------------------------------------


def parse_tuning(pairs: Sequence[str]) -> RecallTuning:
    types = {f.name: f.type for f in fields(RecallTuning)}
    values = {}
    for pair in pairs:
        name, _, raw = pair.partition("=")
        if name not in types:
            sys.exit(f"unknown tuning field {name!r}; known: {', '.join(types)}")
        if raw.lower() == "none":  # e.g. floor=none: the ranking alone, no "nothing relevant" abstention
            values[name] = None
        else:
            values[name] = int(raw) if types[name] in ("int", int) else float(raw)
    return replace(RecallTuning(), **values)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--scale", type=int, default=0, help="also time recall over one team of N memories")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of questions in the scale run")
    parser.add_argument("--cached-queries", action="store_true", help="cache query vectors (tuning only)")
    parser.add_argument("--dated", action="store_true", help="memories written at their session's date")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--ablations", action="store_true", help="also run the ABLATIONS table")
    args = parser.parse_args(argv)

    tuning = parse_tuning(args.overrides)
    convs = load(args.data)
    embedder = CachedEmbedder(OnnxMiniLmEmbedder(), cache_queries=args.cached_queries)
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-") as tmp:
        t0 = time.perf_counter()
        stores = build_stores(convs, Path(tmp), embedder, args.dated)
        embedder.save()
        print(
            f"indexed {sum(len(c.turns) for c in convs)} turns of {len(convs)} conversations "
            f"in {time.perf_counter() - t0:.1f} s; tuning: {tuning}"
        )
        report = evaluate(convs, stores, embedder, tuning)
        print_report("LoCoMo dev", report)
        result = {
            "r@5": round(report["overall"][0], 4),
            "r@10": round(report["overall"][1], 4),
            "r@20": round(report["overall"][2], 4),
            "p50_ms": round(report["p50_ms"], 2),
            "p95_ms": round(report["p95_ms"], 2),
        }
        for name, values in ABLATIONS.items() if args.ablations else ():
            values = dict(values)
            dated = values.pop("_dated", args.dated)
            fresh = build_stores(convs, Path(tmp), embedder, dated)  # access counts start from zero
            label = f"ablation {name}: {values}" + (" (dated)" if dated else "")
            print_report(label, evaluate(convs, fresh, embedder, replace(tuning, **values)))
        if args.scale:
            scale = scale_run(convs, args.scale, Path(tmp), embedder, tuning, args.rounds)
            embedder.save()
            print(
                f"\nscale run: one team of {scale['memories']} memories (LoCoMo turns + synthetic fillers),"
            )
            print(
                f"  {report['n']} questions x {args.rounds} rounds,"
                f" recall(limit=20) end to end, query embedding included;"
                f" load average during the run {scale['load']:.1f} on {os.cpu_count()} CPUs"
            )
            print(
                f"  first round: wall p50 {scale['recall_p50_ms']:.1f} ms,"
                f" p95 {scale['recall_p95_ms']:.1f} ms;"
                f" process CPU time p50 {scale['cpu_p50_ms']:.1f} ms, p95 {scale['cpu_p95_ms']:.1f} ms"
            )
            print(
                f"  best of {args.rounds} per question: wall p50 {scale['best_p50_ms']:.1f} ms,"
                f" p95 {scale['best_p95_ms']:.1f} ms"
            )
            print(
                f"  parts, wall p50: query embedding {scale['embed_p50_ms']:.1f} ms,"
                f" index.search {scale['index_search_p50_ms']:.1f} ms"
            )
            result |= {
                "scale_memories": scale["memories"],
                "scale_p50_ms": round(scale["recall_p50_ms"], 2),
                "scale_p95_ms": round(scale["recall_p95_ms"], 2),
                "scale_best_p95_ms": round(scale["best_p95_ms"], 2),
                "scale_load": round(scale["load"], 1),
            }
    print(json.dumps(result))


if __name__ == "__main__":
    main()

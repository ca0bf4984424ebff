"""Bulk embedding alone: the texts one ingest hands the model, embedded the old way and the new way.

The first `--sessions` sessions of the multi-session dev set are ingested into a scratch store through
the path `cairn ingest` takes, with a recording embedder behind the cache, so the texts are exactly the
ones that reach the model (excerpts and memories, each once). Then those texts are embedded by fresh
`OnnxMiniLmEmbedder`s, interleaved round by round: "before" batches up to 8 rows whatever their length
(the old setting), "after" caps a batch at `batch_tokens` padded tokens (the default). Process CPU time
is the figure to compare on a shared machine; wall time is printed beside it. Ends with one JSON line.

    .venv/bin/python benchmarks/embed_bulk.py [--sessions 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cairn.adapters.embedding import OnnxMiniLmEmbedder  # noqa: E402
from cairn.bootstrap import build_container  # noqa: E402
from cairn.domain.models import KeyScope, Principal  # noqa: E402
from cairn.settings import Settings  # noqa: E402
from coding_eval import ingest_session  # noqa: E402
from multi_session_eval import AGENTS, DATA, _read  # noqa: E402

CONFIGS = {"before": {"batch_size": 8, "batch_tokens": 1 << 30}, "after": {}}


class _Recording:
    """The real embedder, keeping every text a bulk call handed it."""

    def __init__(self, inner: OnnxMiniLmEmbedder) -> None:
        self.inner, self.texts = inner, []
        self.version, self.dimension = inner.version, inner.dimension

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def texts_of(sessions: int) -> list[str]:
    spec = json.loads((DATA / "set.json").read_text())
    recording = _Recording(OnnxMiniLmEmbedder())
    with tempfile.TemporaryDirectory() as home:
        container = build_container(Settings(mode="local", home=Path(home)), embedder=recording)
        try:
            team, _, _ = container.keys.create_team("bench", "dev")
            caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
            for s in spec["sessions"][:sessions]:
                raw = [_read(DATA / s["file"])]
                ingest_session(
                    container, caller, AGENTS.get(s["agent"], s["agent"]), s["id"], spec["project"], raw
                )
        finally:
            container.runner.close()
            container.close()
    return recording.texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = texts_of(args.sessions)
    embedders = {name: OnnxMiniLmEmbedder(**kwargs) for name, kwargs in CONFIGS.items()}
    for embedder in embedders.values():
        embedder.embed(["warm up"])
    cpu: dict[str, list[float]] = {name: [] for name in embedders}
    wall: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            t0, c0 = time.perf_counter(), time.process_time()
            embedder.embed(texts)
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - t0)
    result = {
        "texts": len(texts),
        "chars": sum(map(len, texts)),
        "rounds": args.rounds,
        "load": os.getloadavg()[0],
    }
    for name in embedders:
        result[f"{name}_cpu_s_median"] = round(statistics.median(cpu[name]), 2)
        result[f"{name}_wall_s_median"] = round(statistics.median(wall[name]), 2)
        print(f"{name:7} cpu {[round(x, 2) for x in cpu[name]]}  wall {[round(x, 2) for x in wall[name]]}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""Learning pipeline, end to end in zero-LLM mode: time per stage and peak memory on real transcripts.

For each transcript (default: the largest real fixtures of each agent in tests/fixtures/transcripts) a fresh
local store is built, the transcript is prepared exactly as the capture worker does (redaction, gzip),
stored as part 1, and the stages run in order as the inline runner runs them. The ONNX embedder is
loaded once before timing (a running server has it loaded). Reported per transcript: wall time per
stage and in total, memories created, Python peak allocation (tracemalloc) and process max RSS. A
second pass over the same session measures the idempotent rerun (every stage skipped).

    .venv/bin/python benchmarks/pipeline.py [--runs 3] [FILE ...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _paths import TRANSCRIPTS
from cairn.bootstrap import build_container, shared_embedder
from cairn.capture.upload import prepare
from cairn.domain.models import KeyScope, Principal
from cairn.pipeline.models import ExtractInput, SessionRef
from cairn.pipeline.stages.consolidate import consolidate
from cairn.pipeline.stages.ingest import chunk, extract, parse
from cairn.pipeline.stages.reflect import reflect
from cairn.services.uploads import UploadRequest
from cairn.settings import Settings

FIXTURES = TRANSCRIPTS
DEFAULT = [
    FIXTURES / "codex/localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    FIXTURES / "claude-code/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
]


def run_once(path: Path, home: Path) -> dict:
    agent = "codex" if path.name.startswith("rollout-") else "claude-code"
    container = build_container(Settings(mode="local", home=home))
    try:
        team, _, _ = container.keys.create_team("bench", "dev")
        caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
        raw = path.read_bytes()
        times: dict[str, float] = {}
        t = time.perf_counter()
        data = prepare(raw).data
        times["redact+gzip (client)"] = time.perf_counter() - t
        target = container.uploads.request_upload(
            caller, UploadRequest(agent, "bench-session", "github.com/bench/app", 1, len(data))
        )
        container.blobs.put(target.key, data, "application/gzip")
        container.uploads.part_stored(target.key)
        deps = container.pipeline
        ref = SessionRef(team_id=team.id, session_id="bench-session")

        def stages() -> dict[str, float]:
            out = {}
            t0 = time.perf_counter()
            parsed = parse(deps, ref)
            out["parse"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            chunked = chunk(deps, parsed)
            out["chunk"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            for key in chunked.chunk_keys:
                extract(deps, ExtractInput(**ref.model_dump(), chunk_key=key))
            out["extract"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            done = consolidate(deps, chunked)
            out["consolidate"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            reflect(deps, done)
            out["reflect"] = time.perf_counter() - t0
            out["_created"] = done.created
            out["_chunks"] = len(chunked.chunk_keys)
            return out

        tracemalloc.start()
        first = stages()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        t = time.perf_counter()
        stages()
        rerun = time.perf_counter() - t
        times.update({k: v for k, v in first.items() if not k.startswith("_")})
        return {
            "times": times,
            "created": first["_created"],
            "chunks": first["_chunks"],
            "peak": peak,
            "rerun": rerun,
            "bytes": len(raw),
        }
    finally:
        container.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    shared_embedder().embed(["warm up"])
    for path in args.files or DEFAULT:
        results = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as home:
                results.append(run_once(path, Path(home)))
        med = {k: statistics.median(r["times"][k] for r in results) for k in results[0]["times"]}
        pipeline_total = sum(v for k, v in med.items() if "client" not in k)
        r0 = results[0]
        size = f"{r0['bytes'] / 1e6:.2f} MB"
        print(f"\n{path.name} ({size}, {r0['chunks']} chunks, {r0['created']} memories created)")
        for k, v in med.items():
            print(f"  {k:<22} {v * 1000:8.0f} ms")
        print(f"  {'pipeline total':<22} {pipeline_total * 1000:8.0f} ms (median of {args.runs})")
        print(
            f"  {'rerun (all skipped)':<22} {statistics.median(r['rerun'] for r in results) * 1000:8.0f} ms"
        )
        print(f"  python peak alloc      {max(r['peak'] for r in results) / 1e6:8.1f} MB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess max RSS (incl. ONNX embedder): {rss:.0f} MB  python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()

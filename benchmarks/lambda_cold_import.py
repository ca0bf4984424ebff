"""Cold start of each Lambda entry point: a fresh interpreter imports the handler module, as Lambda's
init phase does (container built, SDK clients created; no AWS call is made at import).

Also times the first query embedding, which the API pays on its first recall (the ONNX session is
created lazily). Prints a table and ends with one JSON line.

    .venv/bin/python benchmarks/lambda_cold_import.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HANDLERS = {
    "api": "functions/api/handler.py",
    "mcp": "functions/mcp/handler.py",
    "authorizer": "functions/authorizer/handler.py",
    "indexer": "functions/indexer/handler.py",
    "pipeline": "functions/pipeline/handler.py",
}
PROBE = r"""
import importlib.util, json, sys, time
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("handler", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
t1 = time.perf_counter()
out = {"import_ms": (t1 - t0) * 1000}
if sys.argv[2] == "embed":
    from cairn.bootstrap import shared_embedder
    shared_embedder().embed_query("which port does the payments service use?")
    out["first_embed_ms"] = (time.perf_counter() - t1) * 1000
print(json.dumps(out))
"""

ENV = {
    "CAIRN_MODE": "aws",
    "CAIRN_TABLE_NAME": "cairn-bench",
    "CAIRN_BUCKET": "cairn-bench",
    "CAIRN_OPENSEARCH_ENDPOINT": "https://search-cairn-bench.eu-west-1.es.amazonaws.com",
    "AWS_REGION": "eu-west-1",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "Cairn",
}


def run(path: str, embed: bool) -> dict:
    env = {**os.environ, **ENV, "PYTHONPATH": str(REPO / "layers" / "core")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(REPO / path), "embed" if embed else "-"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    summary = {}
    print(f"{'handler':<12}{'import p50 ms':>15}{'max ms':>10}{'first embed ms':>17}")
    for name, path in HANDLERS.items():
        samples = [run(path, embed=(name in ("api", "mcp"))) for _ in range(args.runs)]
        imports = [s["import_ms"] for s in samples]
        embeds = [s["first_embed_ms"] for s in samples if "first_embed_ms" in s]
        row = {"import_p50_ms": round(statistics.median(imports), 1), "import_max_ms": round(max(imports), 1)}
        if embeds:
            row["first_embed_p50_ms"] = round(statistics.median(embeds), 1)
        summary[name] = row
        embed_txt = f"{row.get('first_embed_p50_ms', ''):>17}"
        print(f"{name:<12}{row['import_p50_ms']:>15}{row['import_max_ms']:>10}{embed_txt}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

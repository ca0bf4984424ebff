"""The hook's cold path after idle: a cold authorizer, then a cold API (or MCP) function and its first query
embedding, each in a fresh interpreter that loads the handler as the Lambda Python runtime does.

The runtime puts the function's code directory (/var/task) and the layer (/opt/python) on sys.path and runs
``importlib.import_module("handler")`` for the template's ``handler.handler``; the probe does the same with
``functions/<name>`` and ``layers/core``, with ``CAIRN_MODE=aws`` and the environment the stack sets.

Measured, per fresh interpreter:
- authorizer: the import (init) and its first invocation with the captured REQUEST event
  (tests/events/apigw/authorizer_request.json) over DynamoDB on a moto server (one GetItem on the key hash,
  the team read; moto's latency stands in for DynamoDB's few milliseconds);
- api / mcp: the import (init) and the first query embedding (the ONNX session is created lazily on a
  recall, so a cold hook pays it once).
Not measured: Lambda's own sandbox start and code download (~100-250 ms per function by AWS's figures),
API Gateway's hops, the API's Secrets Manager read at start-up (the UI secret) and its DynamoDB/OpenSearch
reads on the first request (tens of ms warm); docs/deploy.md adds them as an allowance.

    .venv/bin/python benchmarks/hook_cold_path.py [--runs 5] [--tree PATH] [--init-type snap-start]

``--init-type snap-start`` sets ``AWS_LAMBDA_INITIALIZATION_TYPE`` as Lambda does when it initializes a
SnapStart version: the import then is the init that the snapshot captures (off every request's path) and
the cold path after idle is what runs after a restore: the authorizer's first call and the API's first query
embedding, plus the restores themselves, which only a real account measures (``Restore Duration``).

``--tree`` probes another checkout's functions/ and layers/core (before -> after from two worktrees).

Prints p50/max per step and the cold path's sum, then one JSON line. Figures taken on a shared machine are
upper bounds; the script prints `uptime` first.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVENT = REPO / "tests" / "events" / "apigw" / "authorizer_request.json"
FUNCTIONS = ("authorizer", "api", "mcp")

PROBE = r"""
import importlib, json, sys, time
fn_dir, step, event_path, key = sys.argv[1:5]
sys.path.insert(0, fn_dir)  # /var/task, as the runtime's bootstrap puts it
t0 = time.perf_counter()
module = importlib.import_module("handler")
t1 = time.perf_counter()
out = {"import_ms": (t1 - t0) * 1000}
if step == "invoke":
    from aws_lambda_powertools.utilities.typing import LambdaContext
    ctx = LambdaContext()
    ctx._function_name, ctx._memory_limit_in_mb, ctx._aws_request_id = "cairn-authorizer", 512, "r-1"
    ctx._invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-authorizer"
    event = json.loads(open(event_path).read().replace("${CAIRN_API_KEY}", key))
    t2 = time.perf_counter()
    answer = module.handler(event, ctx)
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow", answer
    out["first_call_ms"] = (time.perf_counter() - t2) * 1000
elif step == "embed":
    from cairn.bootstrap import shared_embedder
    t2 = time.perf_counter()
    shared_embedder().embed_query("which port does the payments service use?")
    out["first_call_ms"] = (time.perf_counter() - t2) * 1000
print(json.dumps(out))
"""


def _moto_team() -> tuple[dict[str, str], str]:
    """A moto server with a table holding one team; its environment and the team's key."""
    sys.path.insert(0, str(REPO))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the moto server's request log
    from cairn.adapters.aws.dynamo import DynamoTeamRepository
    from cairn.services.keys import KeyService

    from tests.contract.adapters_aws import CREDENTIALS, REGION, moto_endpoint, new_table

    table = new_table()
    _, _, secret = KeyService(DynamoTeamRepository(table)).create_team("bench", "ana")
    env = {
        "CAIRN_TABLE_NAME": table.name,
        "CAIRN_DYNAMO_ENDPOINT": moto_endpoint(),
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": CREDENTIALS[0],
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS[1],
    }
    return env, secret


def _probe(tree: Path, name: str, env: dict[str, str], key: str) -> dict:
    step = "invoke" if name == "authorizer" else "embed"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree / "functions" / name), step, str(EVENT), key],
        env=env,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),  # not the repo root: nothing importable by accident
    )
    if done.returncode:
        raise SystemExit(f"{name} probe failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose handlers are probed")
    parser.add_argument("--init-type", choices=("on-demand", "snap-start"), default="on-demand")
    args = parser.parse_args()
    tree = args.tree.resolve()
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    aws_env, key = _moto_team()
    env = {
        **os.environ,
        **aws_env,
        "CAIRN_MODE": "aws",
        "CAIRN_BUCKET": "cairn-bench",
        "CAIRN_OPENSEARCH_ENDPOINT": "https://search-cairn-bench.eu-west-1.es.amazonaws.com",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Cairn",
        "PYTHONPATH": str(tree / "layers" / "core"),  # /opt/python: the shared layer
        "AWS_LAMBDA_INITIALIZATION_TYPE": args.init_type,
    }
    samples: dict[str, list[dict]] = {name: [] for name in FUNCTIONS}
    for _ in range(args.runs):  # interleaved, so load drifts hit every function alike
        for name in FUNCTIONS:
            samples[name].append(_probe(tree, name, env, key))
    summary: dict[str, dict[str, float]] = {}
    print(f"{'function':<12}{'import p50':>12}{'max':>8}{'first call p50':>16}{'max':>8}  first call is")
    for name in FUNCTIONS:
        imports = [s["import_ms"] for s in samples[name]]
        calls = [s["first_call_ms"] for s in samples[name]]
        totals = [s["import_ms"] + s["first_call_ms"] for s in samples[name]]
        row = {
            "import_p50_ms": round(statistics.median(imports)),
            "import_max_ms": round(max(imports)),
            "first_call_p50_ms": round(statistics.median(calls)),
            "first_call_max_ms": round(max(calls)),
            "cold_p50_ms": round(statistics.median(totals)),
            "cold_max_ms": round(max(totals)),
        }
        summary[name] = row
        what = "authorize (moto)" if name == "authorizer" else "first query embedding"
        print(
            f"{name:<12}{row['import_p50_ms']:>12}{row['import_max_ms']:>8}"
            f"{row['first_call_p50_ms']:>16}{row['first_call_max_ms']:>8}  {what}"
        )
    snapshot = args.init_type == "snap-start"
    part = "first_call" if snapshot else "cold"  # after a restore, init is already in the snapshot
    for surface in ("api", "mcp"):
        p50 = summary["authorizer"][f"{part}_p50_ms"] + summary[surface][f"{part}_p50_ms"]
        worst = summary["authorizer"][f"{part}_max_ms"] + summary[surface][f"{part}_max_ms"]
        summary[f"cold_path_{surface}"] = {"p50_ms": p50, "max_ms": worst}
        after = " after the restores (not measured)" if snapshot else ""
        print(f"cold path authorizer + {surface}{after}: p50 {p50} ms, max {worst} ms (measured parts only)")
    summary["init_type"] = args.init_type
    summary["runs"] = args.runs
    summary["tree"] = str(tree)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

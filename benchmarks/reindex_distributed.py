"""Model-change reindex through a Step Functions Distributed Map on LocalStack: records/s with 1, 2 and 4
workers, a reader polling recall throughout, and a run stopped mid-way that resumes.

Needs a running LocalStack (`CAIRN_LOCALSTACK_PORT=4577 python3 localstack/stack.py up`) with its host
Lambda executor and osmem-server. The benchmark creates its own table, bucket, three Lambda functions
(`functions/reindex/handler.py`'s plan / embed_page / finish, zipped with this tree's `cairn` so they run
this code) and one state machine per worker count whose definition mirrors infra/units/reindex.py (Plan ->
Distributed Map with an S3 ItemReader over `reindex/manifest.json` -> Finish; written here as ASL because
a CDK synth costs ~15 s and LocalStack 4.14 does not evaluate MaxConcurrencyPath).

The "models" are `tests/fakes/embedders.HashEmbedder` versions: the figure is the distributed machinery's
own throughput (DynamoDB reads, S3 pages and markers, OpenSearch bulk writes, Step Functions fan-out), not
embedding, which on AWS scales with the workers (each Lambda has its own vCPUs) while here every host
Lambda shares this machine's cores.

    CAIRN_LOCALSTACK_ENDPOINT=http://127.0.0.1:4577 python benchmarks/reindex_distributed.py --memories 20000
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
import time
import uuid
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import boto3
from botocore.config import Config

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "layers" / "core"), str(REPO)]

from cairn.adapters.aws.dynamo import DynamoTable, DynamoTeamRepository, create_table  # noqa: E402
from cairn.adapters.aws.dynamo_memories import memory_item  # noqa: E402
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client  # noqa: E402
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Team, content_hash  # noqa: E402
from cairn.services.indexing import MemoryIndexer  # noqa: E402

from tests.fakes.embedders import HashEmbedder  # noqa: E402

REGION = "us-east-1"
TEAM = "tm_bench"
HANDLER = """
import os
from bench_embedders import HashEmbedder
from cairn.bootstrap import build_distributed_reindex

reindex = build_distributed_reindex(
    embedder=HashEmbedder(os.environ["BENCH_MODEL"], 12), page_size=int(os.environ["BENCH_PAGE"]), settle_s=0
)


def plan(event, context):
    return reindex.plan()


def embed_page(event, context):
    return reindex.embed_page(event["page"], event["version"])


def finish(event, context):
    return reindex.finish()
"""
WORDS = ["deploy", "rsync", "cache", "schema", "migration", "retry", "queue", "token", "lint", "build"]


def client(service: str, endpoint: str):
    return boto3.client(
        service, endpoint_url=endpoint, region_name=REGION, aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 8}),
    )  # fmt: skip


def osmem_url(args: argparse.Namespace) -> str:
    if args.opensearch:
        return args.opensearch
    home = Path(os.environ.get("CAIRN_LOCALSTACK_HOME", REPO / ".localstack"))
    return json.loads((home / "run" / "state.json").read_text())["osmem"]["url"]


def memory(n: int) -> Memory:
    w = len(WORDS)
    text = f"{WORDS[n % w]} note {n}: the {WORDS[(n * 7) % w]} step runs after {WORDS[(n * 3) % w]}"
    return Memory(
        id=f"mem_{n:06d}", team_id=TEAM, kind=MemoryKind.FACT, content=text, project="bench",
        content_hash=content_hash(MemoryKind.FACT, text), created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def seed(table: DynamoTable, index: OpenSearchIndex, n: int) -> None:
    DynamoTeamRepository(table).add_team(Team(TEAM, "bench", datetime(2026, 1, 1, tzinfo=UTC)))
    indexer = MemoryIndexer(index, HashEmbedder("bench-v0", 16))
    for start in range(0, n, 500):
        batch = [memory(i) for i in range(start, min(n, start + 500))]
        with table.item.batch_write() as writes:
            for m in batch:
                writes.save(memory_item(table, m))
        indexer.index(batch)


def code_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("handler.py", HANDLER)
        archive.write(REPO / "tests" / "fakes" / "embedders.py", "bench_embedders.py")
        for path in (REPO / "layers" / "core" / "cairn").rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".onnx":
                archive.write(path, str(path.relative_to(REPO / "layers" / "core")))
    return buffer.getvalue()


def definition(arns: dict[str, str], bucket: str, workers: int) -> str:
    return json.dumps({
        "StartAt": "Plan",
        "States": {
            "Plan": {"Type": "Task", "Resource": arns["plan"], "ResultPath": "$.plan", "Next": "EmbedPages"},
            "EmbedPages": {
                "Type": "Map",
                "ItemReader": {
                    "Resource": "arn:aws:states:::s3:getObject",
                    "ReaderConfig": {"InputType": "JSON"},
                    "Parameters": {"Bucket": bucket, "Key": "reindex/manifest.json"},
                },
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": "Embed",
                    "States": {"Embed": {
                        "Type": "Task", "Resource": arns["embed_page"],
                        "Parameters": {"page.$": "$.page", "version.$": "$.version"},
                        "Retry": [
                            {"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 3, "IntervalSeconds": 1}
                        ],
                        "End": True,
                    }},
                },
                "MaxConcurrency": workers,
                "ResultPath": None,
                "Next": "Finish",
            },
            "Finish": {"Type": "Task", "Resource": arns["finish"], "ResultPath": "$.finish", "End": True},
        },
    })  # fmt: skip


class Reader(threading.Thread):
    """Polls recall's search of the served name the whole time; counts empty and failed answers."""

    def __init__(self, index: OpenSearchIndex) -> None:
        super().__init__(daemon=True)
        self.index, self.polls, self.empty, self.errors = index, 0, 0, []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                hits = self.index.search(TEAM, "deploy rsync step", None, MemoryFilter(), 10, 0).lexical
                self.empty += not hits
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            self.polls += 1
            time.sleep(0.2)


def wait(sfn, execution: str, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = sfn.describe_execution(executionArn=execution)
        if found["status"] != "RUNNING":
            return found
        time.sleep(0.5)
    raise TimeoutError(execution)


def main() -> None:  # noqa: C901 - one linear script
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--page", type=int, default=500)
    parser.add_argument("--opensearch", help="osmem/OpenSearch URL (default: LocalStack's state file)")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    endpoint = os.environ.get("CAIRN_LOCALSTACK_ENDPOINT", "http://127.0.0.1:4577")
    ddb, s3, lam, sfn = (client(s, endpoint) for s in ("dynamodb", "s3", "lambda", "stepfunctions"))
    name = f"bench-{uuid.uuid4().hex[:8]}"
    try:
        create_table(name, ddb)
    except ddb.exceptions.ResourceInUseException:  # a retried create whose first attempt went through
        ddb.get_waiter("table_exists").wait(TableName=name)
    s3.create_bucket(Bucket=name)
    table = DynamoTable.bind(name, host=endpoint, region=REGION, credentials=("test", "test"))
    search = opensearch_client(osmem_url(args), auth="none", timeout=120)
    index = OpenSearchIndex(search, name, 16)
    t0 = time.perf_counter()
    seed(table, index, args.memories)
    print(f"seeded {args.memories} memories in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    env = {
        "CAIRN_MODE": "aws", "CAIRN_TABLE_NAME": name, "CAIRN_BUCKET": name,
        "CAIRN_DYNAMO_ENDPOINT": endpoint,
        "CAIRN_OPENSEARCH_ENDPOINT": osmem_url(args), "CAIRN_OPENSEARCH_AUTH": "none",
        "CAIRN_OPENSEARCH_INDEX_PREFIX": name, "CAIRN_EMBEDDING_DIM": "16", "BENCH_PAGE": str(args.page),
        "CAIRN_OPENSEARCH_TIMEOUT_S": "120",
        "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
    }  # fmt: skip
    code = code_zip()
    arns = {}
    for task in ("plan", "embed_page", "finish"):
        arns[task] = lam.create_function(
            FunctionName=f"{name}-{task}", Runtime="python3.13", Handler=f"handler.{task}",
            Role="arn:aws:iam::000000000000:role/bench", Code={"ZipFile": code}, Timeout=900, MemorySize=1024,
            Environment={"Variables": env | {"BENCH_MODEL": "bench-v0"}},
        )["FunctionArn"]  # fmt: skip
    for task in arns:
        lam.get_waiter("function_active_v2").wait(FunctionName=f"{name}-{task}")

    reader = Reader(index)
    reader.start()
    results: dict[str, dict] = {}

    def set_model(model: str) -> None:
        for task in arns:
            lam.update_function_configuration(
                FunctionName=f"{name}-{task}", Environment={"Variables": env | {"BENCH_MODEL": model}}
            )
            lam.get_waiter("function_updated_v2").wait(FunctionName=f"{name}-{task}")

    machines: dict[int, str] = {}

    def machine(workers: int) -> str:
        machines[workers] = sfn.create_state_machine(
            name=f"{name}-w{workers}", definition=definition(arns, name, workers),
            roleArn="arn:aws:iam::000000000000:role/bench",
        )["stateMachineArn"]  # fmt: skip
        return machines[workers]

    for run, workers in enumerate(args.workers, start=1):
        set_model(f"bench-v{run}")
        arn = machine(workers)
        start = time.perf_counter()
        execution = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
        found = wait(sfn, execution, args.timeout)
        elapsed = time.perf_counter() - start
        assert found["status"] == "SUCCEEDED", found
        rate = args.memories / elapsed
        results[f"{workers} worker(s)"] = {"seconds": round(elapsed, 1), "records_per_s": round(rate, 1)}
        print(
            f"{workers} worker(s): {args.memories} records in {elapsed:.1f} s = {rate:.0f} records/s",
            file=sys.stderr,
        )

    # a run stopped mid-way (an aborted execution: its workers die with it), then started again
    workers = max(args.workers)
    set_model("bench-resume")
    arn = machines.get(workers) or machine(workers)
    execution = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    pages = -(-args.memories // args.page)
    done_prefix = "reindex/bench-resume/done/"
    while True:
        listed = s3.list_objects_v2(Bucket=name, Prefix=done_prefix).get("KeyCount", 0)
        if listed >= pages // 3:
            break
        time.sleep(0.3)
    sfn.stop_execution(executionArn=execution, error="Killed", cause="benchmark: stopped mid-way")
    time.sleep(2)
    done_at_kill = s3.list_objects_v2(Bucket=name, Prefix=done_prefix).get("KeyCount", 0)
    start = time.perf_counter()
    again = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    found = wait(sfn, again, args.timeout)
    resumed_s = time.perf_counter() - start
    assert found["status"] == "SUCCEEDED", found
    plan = json.loads(found["output"])["plan"]
    reader.stop.set()
    reader.join()
    served = search.indices.get_mapping(index=f"{name}-memories")
    (concrete,) = served
    version = served[concrete]["mappings"]["_meta"]["embedding_version"]
    count = search.count(
        index=f"{name}-memories", body={"query": {"term": {"embedding_version": "bench-resume"}}}
    )
    results["resume"] = {
        "pages": pages, "pages_done_when_stopped": done_at_kill, "resumed": plan["resumed"],
        "seconds_after_restart": round(resumed_s, 1), "served_version": version,
        "docs_of_new_model": count["count"],
    }  # fmt: skip
    results["reader"] = {"polls": reader.polls, "empty": reader.empty, "errors": len(reader.errors)}
    if reader.errors:
        print("reader errors:", reader.errors[:3], file=sys.stderr)
    print(
        json.dumps(
            {"benchmark": "reindex_distributed", "memories": args.memories, "page": args.page, **results}
        )
    )


if __name__ == "__main__":
    main()

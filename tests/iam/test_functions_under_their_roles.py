"""Every Lambda's real code path, run under its own role's policy from the synthesized template, against
moto with IAM enforcement on (the role assumed through STS): a grant the code needs and the template lacks
fails the test that names the function and the path.

One `mock_aws` for the module. Resources are created with IAM off; each function then runs with the
assumed role's credentials and `INITIAL_NO_AUTH_ACTION_COUNT` 0, so every DynamoDB, S3, KMS, Step
Functions and Secrets Manager request is authorised against that role's policy. The handlers are the real
`functions/*/handler.py` modules, imported per role with the environment the template gives the function.
OpenSearch is osmem-server (no IAM: its grants are checked against the template in
`test_template_grants.py`, with what moto cannot evaluate; see docs/deploy.md).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import uuid
from dataclasses import dataclass

import boto3
import pytest
from cairn.domain.models import KeyScope, MemoryKind, Principal
from cairn.services.uploads import UploadRequest

from tests.fakes.embedders import HashEmbedder
from tests.iam import template_policies as tp
from tests.iam.recorded_calls import RECORDED, as_role, record_calls
from tests.integration.pipeline_helpers import CLAUDE_FIXTURE

pytestmark = pytest.mark.integration
moto = pytest.importorskip("moto")
pytest.importorskip("aws_cdk", reason="the role policies come from the synthesized CDK template")

PROJECT = "github.com/acme/iam"
SESSION = "iam-session-1"
#: (role label, POWERTOOLS_SERVICE_NAME, handler) of every function of the stack
FUNCTIONS = {
    "api": ("cairn-api", "handler.handler"),
    "mcp": ("cairn-mcp", "handler.handler"),
    "authorizer": ("cairn-authorizer", "handler.handler"),
    "indexer": ("cairn-indexer", "handler.handler"),
    "sweeper": ("cairn-sweeper", "handler.handler"),
    "transfer": ("cairn-transfer", "handler.handler"),
    **{f"pipeline.{s}": ("cairn-pipeline", f"handler.{s}") for s in tp.STAGES},
    **{f"reindex.{t}": ("cairn-reindex", f"handler.{t}") for t in ("plan", "embed_page", "finish")},
}


@dataclass
class LambdaContext:
    function_name: str = "cairn-dev-fn"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:cairn-dev-fn"
    aws_request_id: str = "req-1"


@dataclass
class Stack:
    template: dict
    physical: tp.Physical
    credentials: dict[str, dict[str, str]]  # role label -> assumed-role credentials
    environments: dict[str, dict[str, str]]  # role label -> the function's environment, resolved
    team_id: str
    api_key: str
    transcript_key: str
    table: str
    bucket: str


def _create_resources(template: dict, osmem_url: str) -> tuple[tp.Physical, dict]:
    from cairn.adapters.aws.dynamo_table import create_table

    suffix = uuid.uuid4().hex[:8]
    table, bucket = f"cairn-dev-table-{suffix}", f"cairn-dev-transcripts-{suffix}"
    ddb = boto3.client("dynamodb", region_name=tp.REGION)
    create_table(table, ddb)
    described = ddb.describe_table(TableName=table)["Table"]
    s3 = boto3.client("s3", region_name=tp.REGION)
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    key = boto3.client("kms", region_name=tp.REGION).create_key()["KeyMetadata"]
    s3.put_bucket_encryption(
        Bucket=bucket,
        ServerSideEncryptionConfiguration={
            "Rules": [
                {
                    "ApplyServerSideEncryptionByDefault": {
                        "SSEAlgorithm": "aws:kms",
                        "KMSMasterKeyID": key["Arn"],
                    }
                }
            ]
        },
    )
    secret = boto3.client("secretsmanager", region_name=tp.REGION).create_secret(
        Name=f"cairn-ui-{suffix}", SecretString="s" * 48
    )
    machine = boto3.client("stepfunctions", region_name=tp.REGION).create_state_machine(
        name=f"cairn-dev-learning-{suffix}",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}),
        roleArn=f"arn:aws:iam::{tp.ACCOUNT}:role/sfn",
    )["stateMachineArn"]
    by_id: dict[str, dict[str, str]] = {}
    for logical in tp.resources(template, "AWS::DynamoDB::GlobalTable"):
        by_id[logical] = {
            "Ref": table,
            "Arn": described["TableArn"],
            "StreamArn": described["LatestStreamArn"],
        }
    for logical in tp.resources(template, "AWS::S3::Bucket"):
        by_id[logical] = {"Ref": bucket, "Arn": f"arn:aws:s3:::{bucket}"}
    for logical in tp.resources(template, "AWS::KMS::Key"):
        by_id[logical] = {"Ref": key["KeyId"], "Arn": key["Arn"]}
    for logical in tp.resources(template, "AWS::SecretsManager::Secret"):
        by_id[logical] = {"Ref": secret["ARN"]}
    for logical in tp.resources(template, "AWS::StepFunctions::StateMachine"):
        by_id[logical] = {"Ref": machine, "Name": machine.rsplit(":", 1)[-1]}
    for logical in tp.resources(template, "AWS::Lambda::Function"):
        name = f"cairn-dev-{logical.lower()[:40]}"  # the API is told the transfer worker's name
        by_id[logical] = {"Ref": name, "Arn": f"arn:aws:lambda:{tp.REGION}:{tp.ACCOUNT}:function:{name}"}
    for logical in tp.resources(template, "AWS::OpenSearchService::Domain"):
        by_id[logical] = {"DomainEndpoint": osmem_url.split("://", 1)[1], "Arn": "arn:aws:es:::domain/cairn"}
    return tp.Physical(by_id), {"table": table, "bucket": bucket}


def _assume(template: dict, physical: tp.Physical, label: str) -> dict[str, str]:
    service, handler = FUNCTIONS[label]
    statements = tp.resolved_statements(template, tp.function_id(template, service, handler), physical)
    iam = boto3.client("iam", region_name=tp.REGION)
    name = f"cairn-{label.replace('.', '-')}-{uuid.uuid4().hex[:6]}"
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=name, PolicyName="template", PolicyDocument=json.dumps(tp.for_moto(statements))
    )
    creds = boto3.client("sts", region_name=tp.REGION).assume_role(RoleArn=arn, RoleSessionName=name)[
        "Credentials"
    ]
    return {
        "AWS_ACCESS_KEY_ID": creds["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": creds["SecretAccessKey"],
        "AWS_SESSION_TOKEN": creds["SessionToken"],
    }


def _environment(template: dict, physical: tp.Physical, label: str, osmem_url: str) -> dict[str, str]:
    service, handler = FUNCTIONS[label]
    fn = template["Resources"][tp.function_id(template, service, handler)]
    env = {k: str(physical.resolve(v)) for k, v in fn["Properties"]["Environment"]["Variables"].items()}
    env.update(
        {
            "CAIRN_MODE": "aws",
            "CAIRN_OPENSEARCH_AUTH": "none",  # osmem-server: no SigV4 (the es grants are checked apart)
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "AWS_REGION": tp.REGION,
            "AWS_DEFAULT_REGION": tp.REGION,
        }
    )
    if "CAIRN_OPENSEARCH_ENDPOINT" in env:
        env["CAIRN_OPENSEARCH_ENDPOINT"] = osmem_url
    if label.startswith("reindex."):
        env["CAIRN_REINDEX_SETTLE_S"] = "0"  # no stream indexer runs here to wait for
    return env


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from tests.contract.adapters_aws import osmem_server

    template = tp.synthesized_dev_template(tmp_path_factory.getbasetemp().parent / "iam-template")
    saved = {
        k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    }
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
    os.environ.pop("AWS_SESSION_TOKEN", None)
    boto3.setup_default_session()
    with osmem_server().clone() as osmem, moto.mock_aws(), record_calls():
        physical, names = _create_resources(template, osmem.url)
        credentials = {label: _assume(template, physical, label) for label in FUNCTIONS}
        environments = {label: _environment(template, physical, label, osmem.url) for label in FUNCTIONS}
        team_id, api_key, transcript_key = _team_with_an_upload(environments["api"])
        yield Stack(template, physical, credentials, environments, team_id, api_key, transcript_key, **names)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    boto3.setup_default_session()


def _team_with_an_upload(env: dict[str, str]) -> tuple[str, str, str]:
    """With IAM off (an operator's setup): a team, its admin key, and one uploaded transcript part."""
    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        c = build_container(Settings())
        team, _, secret = c.keys.create_team("iam", "dev")
        caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
        data = gzip.compress(CLAUDE_FIXTURE.read_bytes())
        target = c.uploads.request_upload(
            caller, UploadRequest("claude-code", SESSION, PROJECT, 1, len(data))
        )
        c.blobs.put(target.key, data, "application/gzip")
        return team.id, secret, target.key
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def load(stack: Stack, label: str, code_dir: str):
    """The function's handler module, imported (cold start) under its role and environment."""
    path = tp.REPO / "functions" / code_dir / "handler.py"
    spec = importlib.util.spec_from_file_location(
        f"iam_{label.replace('.', '_')}_{uuid.uuid4().hex[:6]}", path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_template_grants(stack: Stack, label: str, extra: list[tp.Need] = ()) -> int:
    """Every AWS call this function's code made (and what S3 did on its behalf with KMS) is allowed by
    the function's statements in the template, resources and conditions included; returns how many."""
    service, handler = FUNCTIONS[label]
    statements = tp.resolved_statements(
        stack.template, tp.function_id(stack.template, service, handler), stack.physical
    )
    calls = [(svc, op, params) for who, svc, op, params in RECORDED if who == label]
    missing = tp.ungranted(statements, calls, stack.physical)
    missing += [f"{n.action} on {n.resource}" for n in extra if not tp.allowed(statements, n)]
    assert not missing, f"{label} calls what its role in the template does not grant:\n" + "\n".join(missing)
    return len(calls)


def _source_state(stack: Stack) -> dict:
    return {
        "source": {
            "bucket": stack.bucket,
            "key": stack.transcript_key,
            "size": 1,
            "etag": "x",
            "event_id": "e-1",
            "event_time": "2026-11-26T12:00:00Z",
        }
    }


def _run(stack: Stack, label: str, fn_name: str, event: dict, code_dir: str = "pipeline"):
    with as_role(label, stack.credentials[label], stack.environments[label]):
        module = load(stack, label, code_dir)
        return getattr(module, fn_name)(event, LambdaContext())


@pytest.fixture(scope="module")
def learned(stack):
    """The whole learning path, each stage under its own role, as the state machine drives it."""
    state = _source_state(stack)
    state["parse"] = _run(stack, "pipeline.parse", "parse", state)
    state["chunk"] = _run(stack, "pipeline.chunk", "chunk", state)
    state["extract"] = [
        _run(
            stack,
            "pipeline.extract",
            "extract",
            {"source": state["source"], "parse": state["parse"], "chunk": cid, "index": i},
        )
        for i, cid in enumerate(state["chunk"]["chunks"])
    ]
    state["consolidate"] = _run(stack, "pipeline.consolidate", "consolidate", state)
    state["reflect"] = _run(stack, "pipeline.reflect", "reflect", state)
    return state


# --- the learning pipeline ------------------------------------------------------------------------------


def test_every_pipeline_stage_runs_under_its_own_role_and_the_session_is_learned(stack, learned):
    assert learned["chunk"]["chunks"]
    assert learned["consolidate"]["created"] > 0
    assert learned["reflect"].get("reflection_id")
    with as_role(
        "pipeline.reflect", stack.credentials["pipeline.reflect"], stack.environments["pipeline.reflect"]
    ):
        from cairn.adapters.aws.dynamo import dynamo_repositories

        session = dynamo_repositories(stack.table, region=tp.REGION).sessions.get(stack.team_id, SESSION)
    assert session.status == "learned"
    for stage in (s for s in tp.STAGES if s not in ("dream", "fail")):  # dream and fail: own tests
        assert assert_template_grants(stack, f"pipeline.{stage}") > 0, stage


def test_the_dream_stage_runs_under_its_role_after_a_session_and_from_the_schedule(stack, learned):
    after_session = _run(stack, "pipeline.dream", "dream", _source_state(stack))
    assert {"superseded", "folded", "closed", "demoted"} <= set(after_session)
    scheduled = _run(stack, "pipeline.dream", "dream", {"scheduled": True})
    assert scheduled["failed"] == 0
    assert assert_template_grants(stack, "pipeline.dream") > 0


def test_the_fail_stage_marks_the_session_failed_under_its_role(stack, learned):
    state = {**_source_state(stack), "error": {"Error": "States.TaskFailed", "Cause": "boom"}}
    assert _run(stack, "pipeline.fail", "fail", state) == {"marked": True}
    assert_template_grants(stack, "pipeline.fail")


# --- the indexer and the sweep --------------------------------------------------------------------------


def test_the_indexer_indexes_stream_records_under_its_role(stack, learned):
    # the records the event source mapping hands the function (the mapping, not the code, reads the
    # stream: its grant is pinned in tests/infra); built from the learned memories' items
    items = boto3.client("dynamodb", region_name=tp.REGION).scan(
        TableName=stack.table,
        FilterExpression="#t = :m",
        ExpressionAttributeNames={"#t": "type"},
        ExpressionAttributeValues={":m": {"S": "memory"}},
    )["Items"]
    records = [
        {
            "eventID": str(n),
            "eventName": "INSERT",
            "eventSource": "aws:dynamodb",
            "dynamodb": {
                "Keys": {"pk": item["pk"], "sk": item["sk"]},
                "NewImage": item,
                "StreamViewType": "NEW_AND_OLD_IMAGES",
                "SequenceNumber": str(n),
            },
        }
        for n, item in enumerate(items[:20])
    ]
    assert records
    result = _run(stack, "indexer", "handler", {"Records": records}, code_dir="indexer")
    assert result["indexed"] == len(records)
    assert_template_grants(stack, "indexer")


def test_the_upload_sweep_runs_under_its_role(stack, learned):
    assert _run(stack, "sweeper", "handler", {}, code_dir="sweeper") == {"expired": 0}
    assert assert_template_grants(stack, "sweeper") > 0


# --- the authorizer -------------------------------------------------------------------------------------


def test_the_authorizer_checks_a_key_under_its_read_only_role(stack):
    event = {
        "type": "REQUEST",
        "methodArn": f"arn:aws:execute-api:{tp.REGION}:{tp.ACCOUNT}:abc123/dev/GET/v1/whoami",
        "headers": {"Authorization": f"Bearer {stack.api_key}"},
    }
    policy = _run(stack, "authorizer", "handler", event, code_dir="authorizer")
    assert policy["context"]["team_id"] == stack.team_id
    assert assert_template_grants(stack, "authorizer") > 0


# --- the API and MCP functions --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(stack):
    from fastapi.testclient import TestClient

    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        module = load(stack, "api", "api")
    client = TestClient(module.app, base_url="http://127.0.0.1")
    client.headers["Authorization"] = f"Bearer {stack.api_key}"
    return module, client


def test_the_api_reads_the_ui_secret_under_its_role(stack, api):
    module, _ = api
    assert module.app.state.container.ui_secret == b"s" * 48
    assert_template_grants(stack, "api")


def test_the_api_memory_routes_work_under_its_role(stack, api):
    _, client = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        made = client.post(
            "/v1/memories", json={"kind": "decision", "content": "Queue jobs on SQS", "project": PROJECT}
        )
        assert made.status_code == 201, made.text
        memory_id = made.json()["id"]
        assert client.get(f"/v1/memories/{memory_id}").status_code == 200
        assert client.get("/v1/memories", params={"project": PROJECT}).status_code == 200
        newer = client.post(
            f"/v1/memories/{memory_id}/supersede",
            json={"kind": "decision", "content": "Queue jobs on SQS FIFO queues", "project": PROJECT},
        )
        assert newer.status_code == 201, newer.text
        found = client.post("/v1/search", json={"query": "job queue", "project": PROJECT})
        assert found.status_code == 200, found.text
        assert client.get("/v1/sessions").status_code == 200
    assert_template_grants(stack, "api")


def test_the_api_grants_an_upload_under_its_role(stack, api):
    _, client = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        granted = client.post(
            "/v1/uploads",
            json={
                "agent": "claude-code",
                "session_id": "iam-session-2",
                "project": PROJECT,
                "part": 1,
                "bytes": 100,
            },
        )
    assert granted.status_code == 201, granted.text
    # the client's POST to S3 is authorised as the role that signed it: PutObject, and the key for SSE-KMS
    key_arn = stack.environments["api"]["CAIRN_KMS_KEY_ID"]
    upload = tp.Need("s3:PutObject", f"arn:aws:s3:::{stack.bucket}/{granted.json()['key']}")
    assert_template_grants(stack, "api", extra=[upload, tp.Need("kms:GenerateDataKey", key_arn)])


def test_the_api_opens_cited_transcript_lines_under_its_role(stack, api, learned):
    _, client = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        lines = client.get(f"/v1/sessions/{SESSION}/transcript", params={"line_start": 1, "line_end": 3})
    assert lines.status_code == 200, lines.text
    assert lines.json()["session_id"] == SESSION
    assert_template_grants(stack, "api")


def test_the_api_digest_of_a_learned_session_works_under_its_role(stack, api, learned):
    _, client = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        digest = client.get(f"/v1/projects/{PROJECT}/digest", params={"sessions": 3})
    assert digest.status_code == 200, digest.text
    assert SESSION in [s["id"] for s in digest.json()["sessions"]]
    assert_template_grants(stack, "api")


def test_the_api_starts_a_forced_reprocess_under_its_role(stack, api, learned):
    _, client = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        started = client.post(f"/v1/sessions/{SESSION}/reprocess", json={"force": True})
    assert started.status_code == 202, started.text
    listed = boto3.client("s3", region_name=tp.REGION).list_objects_v2(Bucket=stack.bucket, Prefix="teams/")
    assert not [o["Key"] for o in listed.get("Contents", []) if "/stages/" in o["Key"]]
    assert_template_grants(stack, "api")


def test_the_api_audit_trail_and_a_redaction_work_under_its_role(stack, api, learned):
    _, client = api
    leak = "Evaluate Command Suitability"  # in the learned transcript and its stage outputs
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        made = client.post(
            "/v1/memories", json={"kind": "fact", "content": f"{leak} soon", "project": PROJECT}
        )
        assert made.status_code == 201, made.text
        redacted = client.post("/v1/admin/redact", json={"string": leak})
        assert redacted.status_code == 200, redacted.text
        trail = client.get("/v1/audit", params={"limit": 100})
        assert trail.status_code == 200, trail.text
        history = client.get(f"/v1/memories/{made.json()['id']}/audit")
    assert redacted.json()["memories"] >= 1 and redacted.json()["blobs"] >= 1
    assert redacted.json()["old_versions"] >= 1  # the bucket is versioned, as the stack's is
    assert {"write", "redact"} <= {e["action"] for e in trail.json()["items"]}
    assert [e["action"] for e in history.json()["items"]] == ["write"]
    assert_template_grants(stack, "api")


class CapturedLaunch:
    """Stands in for Lambda's async queue: the API's invoke is recorded (and checked against the
    template by `assert_template_grants`), and the test then runs the worker under its own role."""

    def __init__(self, launcher) -> None:
        self.inner, self.events = launcher, []

    def launch(self, team_id: str, transfer_id: str) -> None:
        self.events.append({"team_id": team_id, "transfer_id": transfer_id})
        from botocore.exceptions import ClientError

        try:
            self.inner.launch(team_id, transfer_id)  # the real boto3 Invoke, under the API's role
        except ClientError as exc:  # moto holds no worker function; a refusal would be AccessDenied
            assert exc.response["Error"]["Code"] == "ResourceNotFoundException", exc


def _transfer(stack: Stack, api, path: str, **kwargs):
    module, client = api
    transfers = module.app.state.container.transfers
    if not isinstance(transfers._launcher, CapturedLaunch):
        transfers._launcher = CapturedLaunch(transfers._launcher)
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        answer = client.post(path, **kwargs)
    assert answer.status_code in (201, 202), answer.text
    return answer.json(), transfers._launcher


def test_an_export_is_started_by_the_api_and_written_by_the_worker_under_their_roles(stack, api, learned):
    import cairn.adapters.aws.s3 as s3_adapter
    from moto.s3 import models as s3_models

    started, launched = _transfer(stack, api, "/v1/admin/exports")
    # small parts, so the worker's multipart upload (and its abort grant) runs here too
    saved = s3_adapter.PART_BYTES, s3_models.S3_UPLOAD_PART_MIN_SIZE
    s3_adapter.PART_BYTES = s3_models.S3_UPLOAD_PART_MIN_SIZE = 256
    try:
        done = _run(stack, "transfer", "handler", launched.events[-1], code_dir="transfer")
    finally:
        s3_adapter.PART_BYTES, s3_models.S3_UPLOAD_PART_MIN_SIZE = saved
    assert done["state"] == "done" and done["records"] > 0, done
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        status = api[1].get(f"/v1/admin/exports/{started['id']}").json()
    assert status["state"] == "done" and f"/transfers/{started['id']}/export.jsonl" in status["url"]
    worker = stack.environments["api"]["CAIRN_TRANSFER_FUNCTION"]
    invoke = tp.Need("lambda:InvokeFunction", f"arn:aws:lambda:{tp.REGION}:{tp.ACCOUNT}:function:{worker}")
    # the client's GET of the presigned URL is authorised as the API's role, with the key to decrypt
    key = f"teams/{stack.team_id}/transfers/{started['id']}/export.jsonl"
    read = [
        tp.Need("s3:GetObject", f"arn:aws:s3:::{stack.bucket}/{key}"),
        tp.Need("kms:Decrypt", stack.environments["api"]["CAIRN_KMS_KEY_ID"]),
    ]
    assert_template_grants(stack, "api", extra=[invoke, *read])
    calls = {op for who, _, op, _ in RECORDED if who == "transfer"}
    assert {"CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"} <= calls
    assert (
        assert_template_grants(
            stack,
            "transfer",
            extra=[tp.Need("s3:AbortMultipartUpload", f"arn:aws:s3:::{stack.bucket}/{key}")],
        )
        > 0
    )


def test_an_import_is_uploaded_and_run_by_the_worker_under_their_roles(stack, api, learned):
    from cairn.domain import codec
    from cairn.domain.models import Memory, Relation

    memory = Memory(
        id="mem_01jd0000000000000000000000",
        team_id="other",
        kind=MemoryKind.FACT,
        content="Imported under the transfer worker's role",
        project=PROJECT,
    )
    relation = Relation("rel_01jd0000000000000000000000", "other", memory.id, "relates-to", memory.id)
    lines = [
        {"type": "memory", "record": codec.encode_memory(memory)},
        {"type": "relation", "record": codec.encode_relation(relation)},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    granted, launched = _transfer(stack, api, "/v1/admin/imports", json={"bytes": len(data)})
    key = f"teams/{stack.team_id}/transfers/{granted['id']}/import.jsonl"
    boto3.client("s3", region_name=tp.REGION).put_object(Bucket=stack.bucket, Key=key, Body=data)
    _transfer(stack, api, f"/v1/admin/imports/{granted['id']}/start")
    done = _run(stack, "transfer", "handler", launched.events[-1], code_dir="transfer")
    assert done["state"] == "done", done
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        status = api[1].get(f"/v1/admin/imports/{granted['id']}").json()
    assert status["counts"] == {"memories": 1, "relations": 1, "sessions": 0, "skipped": 0}, status
    upload = tp.Need("s3:PutObject", f"arn:aws:s3:::{stack.bucket}/{key}")
    assert_template_grants(stack, "api", extra=[upload])
    assert_template_grants(stack, "transfer")


@pytest.fixture(scope="module")
def mcp(stack):
    from cairn.api.mcp_tools import ToolServices

    with as_role("mcp", stack.credentials["mcp"], stack.environments["mcp"]):
        module = load(stack, "mcp", "mcp")
    caller = Principal(stack.team_id, "dev", "k", frozenset({KeyScope.WRITE}))
    return ToolServices.from_container(module.app.state.container), caller


def test_the_mcp_tools_that_touch_the_table_work_under_its_role(stack, mcp):
    from cairn.api import mcp_args as a
    from cairn.api import mcp_tools as t

    services, caller = mcp
    with as_role("mcp", stack.credentials["mcp"], stack.environments["mcp"]):
        made = t._remember(
            services,
            caller,
            a.RememberArgs(kind=MemoryKind.FACT, content="Redis holds sessions", project=PROJECT),
        )
        t._supersede(
            services, caller, a.SupersedeArgs(id=made["memory"]["id"], content="Valkey holds sessions")
        )
        t._recall(services, caller, a.RecallArgs(query="where are sessions held", project=PROJECT))
        t._sessions(services, caller, a.SessionsArgs())
    assert assert_template_grants(stack, "mcp") > 0


def test_the_mcp_transcript_tool_reads_cited_lines_under_its_role(stack, mcp, learned):
    from cairn.api import mcp_args as a
    from cairn.api import mcp_tools as t

    services, caller = mcp
    with as_role("mcp", stack.credentials["mcp"], stack.environments["mcp"]):
        window = t._transcript(
            services, caller, a.TranscriptArgs(session_id=SESSION, line_start=1, line_end=3)
        )
    assert window["session_id"] == SESSION
    assert_template_grants(stack, "mcp")


def test_the_mcp_digest_tool_works_under_its_role(stack, mcp, learned):
    from cairn.api import mcp_args as a
    from cairn.api import mcp_tools as t

    services, caller = mcp
    with as_role("mcp", stack.credentials["mcp"], stack.environments["mcp"]):
        digest = t._digest(services, caller, a.DigestArgs(project=PROJECT, sessions=3))
    assert SESSION in digest["sessions"]
    assert_template_grants(stack, "mcp")


def test_statements_moto_checks_by_action_alone_name_only_this_stacks_resources(stack):
    """moto authorises DynamoDB, KMS, Step Functions and Secrets Manager requests against "*": their
    statements' resources are pinned here instead, to the emulated resources the template names."""
    ours = {
        v for attrs in stack.physical.by_logical_id.values() for v in attrs.values() if v.startswith("arn:")
    }
    for label, (service, handler) in FUNCTIONS.items():
        fn = tp.function_id(stack.template, service, handler)
        for st in tp.resolved_statements(stack.template, fn, stack.physical):
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if not any(a.split(":")[0] in ("dynamodb", "kms", "states", "secretsmanager") for a in actions):
                continue
            for resource in st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]:
                assert resource != "*", (label, actions)
                assert any(resource == arn or resource.startswith(arn + "/") for arn in ours), (
                    label,
                    resource,
                )


# --- the model-change reindex (last: its swap turns the served index into an alias) --------------------


def test_a_distributed_reindex_plans_embeds_its_pages_and_swaps_under_the_tasks_roles(
    stack, learned, monkeypatch
):
    # a model change, as in production: the served index holds the bundled model's vectors once the
    # indexer has run, and a rebuild to the model it already serves is refused ("nothing to rebuild")
    import cairn.bootstrap

    target = HashEmbedder("iam-model-change", 12)
    monkeypatch.setattr(cairn.bootstrap, "shared_embedder", lambda: target)
    plan = _run(stack, "reindex.plan", "plan", {}, code_dir="reindex")
    assert plan["pages"] >= 1 and plan["resumed"] is False
    with as_role("reindex.plan", stack.credentials["reindex.plan"], stack.environments["reindex.plan"]):
        manifest = json.loads(
            boto3.client("s3", region_name=tp.REGION)
            .get_object(Bucket=stack.bucket, Key="reindex/manifest.json")["Body"]
            .read()
        )
    for item in manifest:
        assert _run(stack, "reindex.embed_page", "embed_page", item, code_dir="reindex")["embedded"] > 0
    assert _run(stack, "reindex.finish", "finish", {}, code_dir="reindex")["swapped"] is True
    for task in ("plan", "embed_page", "finish"):
        assert assert_template_grants(stack, f"reindex.{task}") > 0, task


def test_the_api_reads_the_reindex_progress_for_the_ui_under_its_role(stack, api, learned):
    """After the run above: the record and done markers under `reindex/` (GetObject on the record, a
    listing of the done markers) and the served model. Without the API's grant on `reindex/` this fails."""
    module, _ = api
    with as_role("api", stack.credentials["api"], stack.environments["api"]):
        progress = module.app.state.container.reindex_progress()
    assert progress.state == "swapped" and progress.unit == "pages"
    assert progress.total >= 1 and progress.done == progress.total and progress.building is None
    assert progress.served == progress_model(stack)
    assert_template_grants(stack, "api")


def progress_model(stack: Stack) -> str:
    with as_role("reindex.plan", stack.credentials["reindex.plan"], stack.environments["reindex.plan"]):
        run = json.loads(
            boto3.client("s3", region_name=tp.REGION)
            .get_object(Bucket=stack.bucket, Key="reindex/run.json")["Body"]
            .read()
        )
    return run["version"]

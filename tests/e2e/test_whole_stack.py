"""The deployed ``Cairn-local`` stack on LocalStack, end to end, through its public surfaces only.

What runs: the CDK template deployed by ``localstack/deploy.py`` (API Gateway REST -> API Lambda, S3 ->
EventBridge -> Step Functions -> stage Lambdas, DynamoDB + stream -> indexer Lambda -> OpenSearch/osmem,
SQS dead-letter queue). What drives it: the operator's ``cairn admin create-team`` (CAIRN_MODE=aws against
the deployed table), the agent hooks ``cairn hook stop`` / ``cairn hook session-start`` as processes
configured with the API URL and a key, the official ``mcp`` client, and plain HTTP. AWS APIs are used only
to observe (the state machine's executions, the dead-letter queue, the kept S3 object) and to call the
authorizer Lambda, which LocalStack community's gateway does not call itself, and the upload sweep, which
EventBridge would call on its schedule.

Run with ``localstack/run-e2e.sh`` (up, deploy, this suite, down) or, against a stack already up and
deployed, ``pytest -m e2e tests/e2e/test_whole_stack.py``. Waits are bounded polls: generous deadlines only
keep a broken stack from hanging the run; no assertion is about speed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.conftest import ENDPOINT, REGION
from tests.paths import CLAUDE_SESSION

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
STATE_HOME = Path(os.environ.get("CAIRN_LOCALSTACK_HOME", REPO / ".localstack"))
DEPLOY_FILE = STATE_HOME / "run" / "deploy.json"
FIXTURE = CLAUDE_SESSION
CAIRN = str(Path(sys.executable).with_name("cairn"))
AGENT = "claude-code"
#: Only keep a broken stack from hanging the run (the pipeline takes ~15-60 s here).
PIPELINE_DEADLINE_S = 420.0
KEY_PATTERN = re.compile(r"\bcairn_[A-Za-z0-9_-]{20,}")
TEAM_PATTERN = re.compile(r"\bteam (team_[a-z0-9]+)\b")


# --- the deployed stack ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stack(localstack, aws) -> dict[str, Any]:
    if not DEPLOY_FILE.exists():
        pytest.skip(f"Cairn-local is not deployed ({DEPLOY_FILE} missing): run localstack/deploy.py")
    info = json.loads(DEPLOY_FILE.read_text())
    try:
        status = aws("cloudformation").describe_stacks(StackName=info["stack"])["Stacks"][0]["StackStatus"]
    except Exception as exc:  # noqa: BLE001 - any answer but a deployed stack means: skip with the reason
        pytest.skip(f"{info['stack']} is not deployed on {ENDPOINT} ({exc}): run localstack/deploy.py")
    if status not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
        pytest.skip(f"{info['stack']} is {status}: run localstack/deploy.py")
    return info


def operator_env(stack: dict[str, Any]) -> dict[str, str]:
    """What docs/deploy.md tells an operator to export, pointed at LocalStack."""
    outputs = stack["outputs"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "AWS_"))}
    env.update(
        CAIRN_MODE="aws",
        CAIRN_ENV="local",
        CAIRN_TABLE_NAME=outputs["TableName"],
        CAIRN_BUCKET=outputs["BucketName"],
        CAIRN_OPENSEARCH_ENDPOINT=outputs["OpenSearchEndpoint"],
        CAIRN_OPENSEARCH_INDEX_PREFIX="cairn-local",
        CAIRN_EMBEDDING_DIM="384",
        AWS_ENDPOINT_URL=ENDPOINT,
        AWS_REGION=REGION,
        AWS_DEFAULT_REGION=REGION,
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        COLUMNS="400",  # rich wraps the printed key otherwise
    )
    return env


def create_team(stack: dict[str, Any], name: str, admin: str) -> tuple[str, str]:
    """`cairn admin create-team` against the deployed table; returns (team id, admin key)."""
    done = subprocess.run(
        [CAIRN, "admin", "create-team", name, "--admin", admin],
        env=operator_env(stack),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    text = " ".join(done.stdout.split())
    team, key = TEAM_PATTERN.search(text), KEY_PATTERN.search(text)
    assert team and key, done.stdout
    return team.group(1), key.group(0)


# --- an agent's machine ---------------------------------------------------------------------------
class Agent:
    """A user's Cairn home (config.toml with the API URL and key) and a project folder."""

    def __init__(self, root: Path, api_url: str, key: str, project: str) -> None:
        self.home = root / "cairn-home"
        self.project_dir = root / "project"
        self.home.mkdir(parents=True)
        self.project_dir.mkdir(parents=True)
        (self.project_dir / ".cairn.toml").write_text(f'project = "{project}"\n')
        (self.home / "config.toml").write_text(f'[server]\nurl = "{api_url}"\napi_key = "{key}"\n')
        self.api_url, self.key, self.project = api_url, key, project

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "AWS_"))}
        env["CAIRN_HOME"] = str(self.home)
        return env

    def hook(self, event: str, payload: dict[str, Any], **extra_env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [CAIRN, "hook", event, "--agent", AGENT],
            input=json.dumps(payload),
            env={**self.env(), **extra_env},
            cwd=payload["cwd"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    def stop(self, session_id: str, transcript: Path) -> None:
        """The stop hook as the agent runs it; then wait for its detached worker to deliver the part."""
        payload = {
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(self.project_dir),
            "hook_event_name": "Stop",
        }
        done = self.hook("stop", payload)
        assert done.returncode == 0 and done.stdout == ""
        capture = self.home / "capture"

        def delivered() -> bool:
            queued = [*capture.glob("requests/*.json"), *capture.glob("spool/outbox/*.json")]
            log = capture / "worker.log"
            return not queued and log.exists() and "delivered" in log.read_text()

        poll(delivered, 120, "the stop hook's worker to deliver the transcript")
        assert not list(capture.glob("spool/dead/*")), (capture / "worker.log").read_text()

    def session_start(self, cwd: Path | None = None) -> str:
        """What the session-start hook prints in ``cwd`` (default: this agent's project folder)."""
        payload = {
            "session_id": str(uuid.uuid4()),
            "cwd": str(cwd or self.project_dir),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        done = self.hook("session-start", payload, CAIRN_HOOK_NO_DRAIN="1")
        assert done.returncode == 0
        return done.stdout

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.api_url, headers={"Authorization": f"Bearer {self.key}"}, timeout=60
        )


def poll(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:.0f}s")
        time.sleep(interval)


def wait_for_session(agent: Agent, session_id: str) -> dict[str, Any]:
    """The session as the API reports it, once the pipeline has finished with it (learned or failed)."""

    def finished() -> dict[str, Any] | None:
        with agent.api() as api:
            resp = api.get(f"/v1/sessions/{session_id}")
        if resp.status_code == 200 and resp.json()["status"] in ("learned", "failed"):
            return resp.json()
        return None

    return poll(finished, PIPELINE_DEADLINE_S, f"session {session_id} to be learned or failed", 2.0)


def mcp_call(agent: Agent, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {agent.key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(agent.api_url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result.content
            return result.structured_content

    return anyio.run(main)


# --- one learned session, shared by the tests -----------------------------------------------------
@pytest.fixture(scope="module")
def team_a(stack, tmp_path_factory) -> Agent:
    _, key = create_team(stack, f"e2e-a-{uuid.uuid4().hex[:6]}", "alice")
    return Agent(tmp_path_factory.mktemp("team-a"), stack["api_url"], key, f"e2e/{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def team_b(stack, tmp_path_factory) -> Agent:
    _, key = create_team(stack, f"e2e-b-{uuid.uuid4().hex[:6]}", "bob")
    return Agent(tmp_path_factory.mktemp("team-b"), stack["api_url"], key, f"e2e/{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def learned(team_a, tmp_path_factory) -> dict[str, Any]:
    """The real fixture transcript, stopped by team A's agent and run through the deployed pipeline."""
    session_id = str(uuid.uuid4())
    transcript = tmp_path_factory.mktemp("transcripts") / f"{session_id}.jsonl"
    shutil.copyfile(FIXTURE, transcript)
    # the repository's own manifest travels with the part the worker cuts
    scripts = '{\n  "scripts": {\n    "e2e": "playwright test --project=chromium"\n  }\n}\n'
    (team_a.project_dir / "package.json").write_text(scripts)
    team_a.stop(session_id, transcript)
    session = wait_for_session(team_a, session_id)
    return {"session_id": session_id, "session": session}


@pytest.fixture(scope="module")
def indexed(team_a, learned) -> dict[str, Any]:
    """Recall over MCP once the stream indexer has filled the search index with the learned memories."""
    session = learned["session"]
    assert session["status"] == "learned", f"nothing to recall: the session {session['status']}: {session}"

    def found() -> dict[str, Any] | None:
        # the session's unresolved `npm run build` error; the stream indexes in batches, so poll
        answer = mcp_call(team_a, "recall", {"query": "npm run build", "project": team_a.project})
        matches, session = [], None
        for hit in answer["hits"]:
            if hit["kind"] != "excerpt":
                continue
            session = hit.get("session_id", session)  # said only where it changes
            if session == learned["session_id"] and "npm run build" in hit.get("snippet", ""):
                matches.append(hit)
        return answer if matches else None

    # 300 s: the stream indexer embeds a whole session's excerpts on the host's Lambda executor, slow
    # on a loaded 2-core machine (over 180 s there at load 6; 90 s for the whole file on its own)
    return poll(found, 300, "recall to find the learned memories", 3.0)


# --- the tests ------------------------------------------------------------------------------------
def test_a_stopped_session_is_learned_by_the_deployed_state_machine(aws, stack, learned):
    session = learned["session"]
    assert session["status"] == "learned", session.get("stats")
    stats = session["stats"]
    assert stats["parse"]["events"] > 0 and stats["chunk"]["chunks"] > 0
    assert stats["consolidate"]["created"] > 0
    assert stats["reflect"]["handoff_id"] and stats["reflect"]["reflection_id"]
    # started by the upload itself: S3 -> EventBridge rule -> the stack's state machine
    sfn = aws("stepfunctions")

    def finished_executions() -> list[str] | None:
        # reflect has marked the session learned a moment before the execution itself ends
        pages = sfn.get_paginator("list_executions").paginate(
            stateMachineArn=stack["outputs"]["StateMachineArn"]
        )
        mine = [
            execution
            for page in pages
            for execution in page["executions"]
            if learned["session_id"]
            in sfn.describe_execution(executionArn=execution["executionArn"])["input"]
        ]
        statuses = [execution["status"] for execution in mine]
        return statuses if statuses and "RUNNING" not in statuses else None

    assert poll(finished_executions, 60, "the session's execution to end") == ["SUCCEEDED"]


def test_the_learned_memories_are_served_by_the_api(team_a, learned):
    with team_a.api() as api:
        params = {"project": team_a.project, "limit": 100, "include_superseded": True}
        items = api.get("/v1/memories", params=params).json()["items"]
    kinds = {m["kind"] for m in items}
    assert {"handoff", "reflection"} <= kinds
    assert kinds - {"handoff", "reflection"}, "the extract stage produced no memory of its own"
    assert all(m["provenance"]["session_id"] == learned["session_id"] for m in items)
    declared = [
        m["content"]
        for m in items
        if m["kind"] == "fact" and m["content"].startswith("Scripts declared in package.json")
    ]
    assert declared == ["Scripts declared in package.json:\n- e2e: `playwright test --project=chromium`"]


def test_recall_over_mcp_finds_learned_memories_through_the_search_index(indexed):
    assert indexed["hits"]
    # osmem answers BM25 but not k-NN: recall says the semantic leg failed; the keyword fallback (index
    # unreachable) would mean the indexer or OpenSearch path is broken.
    degraded = indexed["degraded"] or ""
    assert "keyword fallback" not in degraded and "unavailable" not in degraded, degraded
    assert {hit["kind"] for hit in indexed["hits"]} - {"handoff"}, "only the handoff was found"


def test_session_start_prints_the_handoff_of_the_learned_session(team_a, indexed):
    with team_a.api() as api:  # a warm API function: the hook gives up after 3 s and prints nothing
        assert api.get("/v1/whoami").status_code == 200
    printed = team_a.session_start()

    context = json.loads(printed)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "Where you left off" in context["additionalContext"]
    assert "npm run build" in context["additionalContext"]


def test_another_teams_key_sees_none_of_it(team_a, team_b, learned, indexed):
    session_id = learned["session_id"]
    handoff_id = learned["session"]["stats"]["reflect"]["handoff_id"]
    with team_b.api() as api:
        assert api.get(f"/v1/sessions/{session_id}").status_code == 404
        assert api.get(f"/v1/memories/{handoff_id}").status_code == 404
        assert api.get("/v1/memories", params={"limit": 50}).json()["items"] == []
    for project in (team_a.project, None):
        args = {"query": "npm run build", **({"project": project} if project else {})}
        assert mcp_call(team_b, "recall", args)["hits"] == []
    # team B's agent in team A's project folder: no context from team A
    assert "npm run build" not in team_b.session_start(cwd=team_a.project_dir)


def test_a_malformed_transcript_is_dead_lettered_and_its_original_kept(aws, stack, team_a, tmp_path):
    session_id = str(uuid.uuid4())
    garbage = b"this is not a transcript\n{not json either\n"
    transcript = tmp_path / f"{session_id}.jsonl"
    transcript.write_bytes(garbage)
    team_a.stop(session_id, transcript)

    session = wait_for_session(team_a, session_id)
    assert session["status"] == "failed"
    sqs = aws("sqs")
    queue = next(url for name, url in stack["queues"].items() if name.startswith("PipelineDeadLetter"))

    def dead_letter() -> dict[str, Any] | None:
        # Other runs' messages may wait in the queue too: they stay hidden for a while once seen, so each
        # receive reads further into the queue; ours is taken off it.
        answer = sqs.receive_message(
            QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=2, VisibilityTimeout=60
        )
        for message in answer.get("Messages", []):
            body = json.loads(message["Body"])
            if session_id in body["source"]["key"]:
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
                return body
        return None

    body = poll(dead_letter, 120, "the dead-letter message of the malformed transcript")
    assert body["error"]["Error"] and body["execution"]
    [key] = session["transcript_keys"]
    assert body["source"]["key"] == key
    kept = aws("s3").get_object(Bucket=stack["outputs"]["BucketName"], Key=key)["Body"].read()
    # byte for byte, then the project's manifests the worker sent along (`cairn.project_files`)
    assert gzip.decompress(kept).startswith(garbage)


def test_the_authorizer_lambda_allows_a_team_key_and_refuses_any_other(aws, stack, team_a):
    # LocalStack community's gateway does not call REQUEST authorizers, so the deployed one is invoked
    # with the event API Gateway would send.
    function = next(name for logical, name in stack["functions"].items() if logical.startswith("Auth"))
    method_arn = f"arn:aws:execute-api:{REGION}:000000000000:{stack['api_id']}/local/GET/v1/memories"

    def authorize(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        event = {"type": "REQUEST", "methodArn": method_arn, "headers": {"Authorization": f"Bearer {key}"}}
        response = aws("lambda").invoke(FunctionName=function, Payload=json.dumps(event).encode())
        return response, json.loads(response["Payload"].read())

    response, allowed = authorize(team_a.key)
    assert "FunctionError" not in response, allowed
    statement = allowed["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"].endswith(f"{stack['api_id']}/local/*/*")
    assert allowed["context"]["member"] == "alice"
    response, refused = authorize("cairn_" + "x" * 40)
    assert response.get("FunctionError") and refused["errorMessage"] == "Unauthorized"


def test_the_web_ui_signs_in_with_the_secret_the_stack_generated(team_a):
    with team_a.api() as api:
        page = api.get("/ui/login")
    # without CAIRN_UI_SECRET_ARN read at start-up the page answers 503 "not configured"
    assert page.status_code == 200, page.text[:300]
    assert "cairn_ui_login=" in page.headers.get("set-cookie", "")


def test_the_scheduled_upload_sweep_runs_and_leaves_a_session_whose_upload_url_is_still_valid(
    aws, stack, team_a
):
    # EventBridge invokes it every 15 minutes; here it is invoked as the schedule would, once. Failing a
    # session takes its URL's expiry (5 min + grace): that path is tested over moto
    # (tests/integration/test_unsent_uploads_expire.py); this checks the deployed function's wiring.
    function = next(
        name for logical, name in stack["functions"].items() if logical.startswith("PipelineSweep")
    )
    session_id = f"e2e-granted-{uuid.uuid4().hex[:8]}"
    with team_a.api() as api:
        body = {"agent": AGENT, "session_id": session_id, "project": team_a.project, "part": 1, "bytes": 10}
        assert api.post("/v1/uploads", json=body).status_code == 201
    event = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
    response = aws("lambda").invoke(FunctionName=function, Payload=json.dumps(event).encode())
    answer = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, answer
    assert isinstance(answer["expired"], int)
    with team_a.api() as api:
        assert api.get(f"/v1/sessions/{session_id}").json()["status"] == "received"


def _cookies(response: httpx.Response) -> str:
    return "; ".join(c.split(";", 1)[0] for c in response.headers.get_list("set-cookie"))


def test_cited_transcript_lines_open_over_rest_mcp_and_the_web_ui(aws, stack, team_a, learned):
    session_id = learned["session_id"]
    with team_a.api() as api:
        rest = api.get(f"/v1/sessions/{session_id}/transcript", params={"line_start": 1, "line_end": 3})
        assert rest.status_code == 200, rest.text[:500]
        assert rest.json()["session_id"] == session_id and rest.json()["lines"]
    # the web UI: sign in with the key (the login form's CSRF token), then the transcript page. The
    # cookies are sent by hand: their path is the stage's (/<stage>/ui), which LocalStack's path-style
    # URL (/_aws/execute-api/<id>/<stage>/...) does not start with, so a client would not send them
    with httpx.Client(base_url=team_a.api_url, timeout=60) as browser:
        form = browser.get("/ui/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert csrf, form.text[:500]
        signed_in = browser.post(
            "/ui/login", data={"csrf": csrf.group(1), "key": team_a.key}, headers={"Cookie": _cookies(form)}
        )
        assert signed_in.status_code in (200, 303), signed_in.text[:300]
        page = browser.get(
            f"/ui/sessions/{session_id}/transcript",
            params={"line_start": 1, "line_end": 3},
            headers={"Cookie": _cookies(signed_in)},
        )
    assert page.status_code == 200, page.text[:500]
    assert "Sign in" not in page.text[:2000]
    tool = mcp_call(team_a, "transcript", {"session_id": session_id, "line_start": 1, "line_end": 3})
    assert tool["session_id"] == session_id and tool["lines"]
    # the part was uploaded through the presigned POST: SSE-KMS with the stack's key, not SSE-S3
    [key] = learned["session"]["transcript_keys"]
    head = aws("s3").head_object(Bucket=stack["outputs"]["BucketName"], Key=key)
    assert head["ServerSideEncryption"] == "aws:kms", head


def test_a_forced_reprocess_runs_the_session_again_through_the_state_machine(aws, stack, team_a, learned):
    session_id = learned["session_id"]
    sfn = aws("stepfunctions")
    machine = stack["outputs"]["StateMachineArn"]
    with team_a.api() as api:
        started = api.post(f"/v1/sessions/{session_id}/reprocess", json={"force": True})
    assert started.status_code == 202, started.text[:500]

    def reprocessed() -> list[str] | None:
        pages = sfn.get_paginator("list_executions").paginate(stateMachineArn=machine)
        mine = [e for page in pages for e in page["executions"] if e["name"].startswith("reprocess-")]
        mine = [
            e for e in mine if session_id in sfn.describe_execution(executionArn=e["executionArn"])["input"]
        ]
        statuses = [e["status"] for e in mine]
        return statuses if statuses and "RUNNING" not in statuses else None

    assert poll(reprocessed, 180, "the forced reprocess to end") == ["SUCCEEDED"]
    with team_a.api() as api:
        assert api.get(f"/v1/sessions/{session_id}").json()["status"] == "learned"

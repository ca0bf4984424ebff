"""The learning state machine CDK synthesizes, executed by moto, its Lambda tasks running our stage handlers.

The definition is the dev template's, byte for byte except its intrinsics (function ARNs, queue URL,
partition), resolved to resources created in moto. moto runs the states (Pass, Task, Map with ItemSelector,
Retry with jitter, Catch, null result paths, the SQS integration); its Lambda backend hands each invocation
to `HostLambdaRuntime` (tests/integration/moto_state_machine.py), which calls `functions/pipeline/handler.py`
over a local container. The transcript is a real Claude Code session, uploaded through the local API.
"""

from __future__ import annotations

import gzip
import json
import os
import uuid
from collections import Counter
from pathlib import Path

import boto3
import pytest
from cairn.api.app import create_app
from cairn.domain.models import KeyScope, MemoryFilter, Principal
from cairn.services.uploads import UploadRequest
from fastapi.testclient import TestClient
from moto import mock_aws

from tests.integration.moto_state_machine import (
    EXECUTE_STATE_MACHINES,
    REGION,
    BrokenStageError,
    HostLambdaRuntime,
    PipelineOnMoto,
    TransientStageError,
    deploy,
    synthesize,
)
from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow]
pytest.importorskip("aws_cdk", reason="aws-cdk-lib is not installed (pip install -e '.[cdk]')")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

REPO = Path(__file__).resolve().parents[2]
S3_EVENT = REPO / "tests" / "events" / "stepfunctions" / "s3_object_created.json"
PROJECT = "github.com/demo/app"


@pytest.fixture(scope="session")
def dev_template(tmp_path_factory) -> dict:
    return synthesize(tmp_path_factory.mktemp("cdk"), "dev")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    """One warm execution environment for the pipeline code: handler.py and its local container load once."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CAIRN_MODE", "local")
        mp.setenv("CAIRN_HOME", str(tmp_path_factory.mktemp("lambda-home")))
        mp.setenv("POWERTOOLS_TRACE_DISABLED", "true")
        host = HostLambdaRuntime(REPO / "functions" / "pipeline")
        container = host.module("handler").container
        # In AWS the S3 event starts the state machine; here the state machine, not the inline runner, learns.
        container.runner = None
        yield host
        container.close()


@pytest.fixture
def pipeline(dev_template, runtime, monkeypatch) -> PipelineOnMoto:
    runtime.reset()
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws(config=EXECUTE_STATE_MACHINES):
        runtime.install(monkeypatch)
        yield deploy(dev_template, boto3.Session(region_name=REGION))


def _uploaded(runtime: HostLambdaRuntime, session_id: str, raw: bytes) -> tuple[str, dict]:
    """Upload through the local API (POST /v1/uploads, PUT the gzipped bytes); the S3 event that follows."""
    container = runtime.module("handler").container
    team, _, secret = container.keys.create_team(f"team-{session_id}", "dev")
    with TestClient(create_app(container)) as api:
        target = upload(
            api, {"Authorization": f"Bearer {secret}"}, raw=raw, session_id=session_id, project=PROJECT
        )
    event = json.loads(S3_EVENT.read_text().replace("__TRANSCRIPT_KEY__", target["key"]))
    event["detail"]["object"]["size"] = len(container.blobs.get(target["key"]))
    return team.id, event


def _session(runtime: HostLambdaRuntime, team_id: str, session_id: str):
    return runtime.module("handler").container.sessions.get(team_id, session_id)


def _task_failures(history: list[dict]) -> list[dict]:
    return [e["lambdaFunctionFailedEventDetails"] for e in history if e["type"] == "LambdaFunctionFailed"]


def _entered(history: list[dict]) -> list[str]:
    return [e["stateEnteredEventDetails"]["name"] for e in history if e["type"].endswith("StateEntered")]


def test_the_synthesized_state_machine_learns_a_real_session_through_our_stage_handlers(pipeline, runtime):
    team_id, event = _uploaded(runtime, "moto-sfn-ok", CLAUDE_FIXTURE.read_bytes())
    assert _session(runtime, team_id, "moto-sfn-ok").status == "received"

    done = pipeline.run(event)

    assert done["status"] == "SUCCEEDED", pipeline.history(done["executionArn"])[-3:]
    # moto ran CDK's text: every literal part of the template's Fn::Join, in order, and nothing else
    assert (
        pipeline.definition
        == pipeline.sfn.describe_state_machine(stateMachineArn=pipeline.state_machine_arn)["definition"]
    )
    state = json.loads(done["output"])
    assert state["source"]["key"] == event["detail"]["object"]["key"]
    assert len(state["chunk"]["chunks"]) >= 2 and len(state["extract"]) == len(state["chunk"]["chunks"])
    assert state["consolidate"]["created"] >= 1
    # every stage task reached its handler, the Map once per chunk
    counts = {h: len(runtime.calls(h)) for h in ("handler.parse", "handler.chunk", "handler.extract")}
    assert counts == {
        "handler.parse": 1,
        "handler.chunk": 1,
        "handler.extract": len(state["chunk"]["chunks"]),
    }
    calls = ("handler.consolidate", "handler.reflect", "handler.dream", "handler.fail")
    assert [len(runtime.calls(h)) for h in calls] == [1, 1, 1, 0]
    assert state["dream"] == session_dream(runtime, team_id)

    session = _session(runtime, team_id, "moto-sfn-ok")
    assert session.status == "learned"
    assert session.stats["consolidate"]["created"] == state["consolidate"]["created"]
    container = runtime.module("handler").container
    reader = Principal(team_id, "dev", "k", frozenset({KeyScope.READ}))
    learned = container.memories.list(reader, MemoryFilter(session_id="moto-sfn-ok"), limit=500).items
    assert len(learned) >= state["consolidate"]["created"] > 0
    assert pipeline.dead_letters() == []


def session_dream(runtime, team_id: str) -> dict:
    """The counts the dream stage answered, as the session's project's watermark recorded them."""
    container = runtime.module("handler").container
    keys = [k for k in container.blobs.list(f"teams/{team_id}/projects/") if k.endswith("/dream.json")]
    assert len(keys) == 1, keys
    return json.loads(container.blobs.get(keys[0]))["last"]


def _scheduled(history: list[dict], function_arn: str) -> int:
    return sum(
        1
        for e in history
        if e["type"] == "LambdaFunctionScheduled"
        and e["lambdaFunctionScheduledEventDetails"]["resource"] == function_arn
    )


def test_a_stage_that_fails_once_is_retried_and_the_execution_still_succeeds(pipeline, runtime):
    team_id, event = _uploaded(runtime, "moto-sfn-retry", CLAUDE_FIXTURE.read_bytes())
    runtime.fail_once("handler.chunk", TransientStageError("throttled, try again"))
    runtime.fail_once("handler.extract", TransientStageError("throttled inside the Map"))  # one iteration

    done = pipeline.run(event)

    history = pipeline.history(done["executionArn"])
    assert done["status"] == "SUCCEEDED", history[-3:]
    failures = _task_failures(history)
    assert [f["error"] for f in failures] == ["TransientStageError"] * 2
    assert "throttled, try again" in failures[0]["cause"] and "inside the Map" in failures[1]["cause"]
    # each state entered once, its Lambda scheduled once more than it ran clean: a Retry, not a new pass
    entered = _entered(history)
    chunks = len(json.loads(done["output"])["chunk"]["chunks"])
    assert entered.count("Chunk") == 1 and entered.count("Extract") == chunks
    arn = {
        stage: next(a for k, a in pipeline.function_arns.items() if stage in k)
        for stage in ("Chunk", "Extract")
    }
    assert (_scheduled(history, arn["Chunk"]), _scheduled(history, arn["Extract"])) == (2, chunks + 1)
    assert [i.error for i in runtime.calls("handler.chunk")] == ["TransientStageError", None]
    assert _session(runtime, team_id, "moto-sfn-retry").status == "learned"
    assert pipeline.dead_letters() == []


def test_a_stage_that_always_fails_is_caught_marked_failed_and_dead_lettered(pipeline, runtime):
    team_id, event = _uploaded(runtime, "moto-sfn-broken", CLAUDE_FIXTURE.read_bytes())
    key = event["detail"]["object"]["key"]
    runtime.fail_always("handler.consolidate", BrokenStageError("the index mapping is corrupt"))

    done = pipeline.run(event)

    history = pipeline.history(done["executionArn"])
    assert done["status"] == "FAILED"
    assert (done.get("error"), done.get("cause")) == ("PipelineFailed", "see the dead-letter queue")
    # MaxAttempts counts retries: the first attempt and three retries for States.TaskFailed, then the Catch
    assert [f["error"] for f in _task_failures(history)] == ["BrokenStageError"] * 4
    entered = _entered(history)
    assert entered[entered.index("Consolidate") :] == [
        "Consolidate",
        "Fail",
        "SendToDeadLetter",
        "PipelineFailed",
    ]
    assert "Reflect" not in entered

    # the Fail task reached handler.fail, which marked the session failed with the caught error
    assert [i.error for i in runtime.calls("handler.fail")] == [None]
    session = _session(runtime, team_id, "moto-sfn-broken")
    assert session.status == "failed"
    assert session.stats["error"]["code"] == "BrokenStageError"
    assert "the index mapping is corrupt" in session.stats["error"]["message"]

    # the dead letter says which object and why, and the transcript is kept for a reprocess
    [letter] = pipeline.dead_letters()
    assert letter["execution"] == done["executionArn"]
    assert letter["source"]["key"] == key
    assert letter["error"]["Error"] == "BrokenStageError"
    assert runtime.module("handler").container.blobs.exists(key)


# ---- one learning run per session at a time ---------------------------------------------------------


def _halves() -> tuple[bytes, bytes]:
    lines = CLAUDE_FIXTURE.read_bytes().splitlines(keepends=True)
    return b"".join(lines[: len(lines) // 2]), b"".join(lines[len(lines) // 2 :])


def _granted(runtime: HostLambdaRuntime, session_id: str, parts: int) -> tuple[str, list[str]]:
    """What the API does on AWS: record the session and grant each part's key (S3 takes the bytes)."""
    container = runtime.module("handler").container
    team, _, _ = container.keys.create_team(f"team-{session_id}", "dev")
    caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
    keys = [
        container.uploads.request_upload(
            caller, UploadRequest("claude-code", session_id, PROJECT, part, 1024)
        ).key
        for part in range(1, parts + 1)
    ]
    return team.id, keys


def _stored(runtime: HostLambdaRuntime, key: str, raw: bytes) -> dict:
    """S3 stores the part (nothing records it: the parse stage does), and EventBridge's event for it."""
    container = runtime.module("handler").container
    container.blobs.put(key, gzip.compress(raw), "application/gzip")
    event = json.loads(S3_EVENT.read_text().replace("__TRANSCRIPT_KEY__", key))
    event["detail"]["object"]["size"] = len(container.blobs.get(key))
    event["id"] = str(uuid.uuid4())
    return event


def _learned(runtime: HostLambdaRuntime, team_id: str, session_id: str) -> Counter:
    reader = Principal(team_id, "dev", "k", frozenset({KeyScope.READ}))
    items = runtime.module("handler").container.memories.list(
        reader, MemoryFilter(session_id=session_id), limit=500
    )
    # the reflection names its session: compared across sessions without it
    return Counter((m.kind, m.content.replace(session_id, "<session>")) for m in items.items)


@pytest.fixture
def learned_in_one_run(pipeline, runtime) -> Counter:
    """What one run learns from both halves stored before it starts: what the overlapping runs must learn."""
    first, second = _halves()
    team_id, keys = _granted(runtime, "moto-one-run", 2)
    _stored(runtime, keys[0], first)
    done = pipeline.run(_stored(runtime, keys[1], second))
    assert done["status"] == "SUCCEEDED"
    assert _session(runtime, team_id, "moto-one-run").stats["parse"]["parts"] == 2
    runtime.reset()
    return _learned(runtime, team_id, "moto-one-run")


def test_parts_stored_at_once_start_two_runs_and_the_session_is_learned_by_one(
    pipeline, runtime, learned_in_one_run
):
    first, second = _halves()
    team_id, keys = _granted(runtime, "moto-two-parts", 2)
    events = [_stored(runtime, keys[0], first), _stored(runtime, keys[1], second)]
    # the run that takes the session is kept before chunking until the other run has ended
    reached, release = runtime.hold("handler.chunk")

    runs = [pipeline.start(event) for event in events]  # EventBridge starts both at once
    assert reached.wait(60)
    name = _session(runtime, team_id, "moto-two-parts").stats["run"]["id"]
    [holding] = [arn for arn in runs if arn.endswith(f":{name}")]
    [other] = [pipeline.wait(arn) for arn in runs if arn != holding]
    release.set()
    holder = pipeline.wait(holding)

    assert (other["status"], holder["status"]) == ("SUCCEEDED", "SUCCEEDED")
    left = _entered(pipeline.history(other["executionArn"]))
    assert left[-2:] == ["HeldByAnotherRun", "LeftToThatRun"] and "Chunk" not in left
    assert json.loads(other["output"])["parse"] == {"learned_by": holder["name"]}
    entered = _entered(pipeline.history(holder["executionArn"]))
    assert entered[-1] == "Learned"
    session = _session(runtime, team_id, "moto-two-parts")
    assert session.status == "learned" and "run" not in session.stats
    assert session.stats["parse"]["parts"] == 2  # the run that learned saw both parts
    learned = _learned(runtime, team_id, "moto-two-parts")
    assert max(learned.values()) == 1  # no memory twice
    assert learned == learned_in_one_run
    assert pipeline.dead_letters() == []


def test_a_part_stored_while_its_session_is_learned_is_folded_into_the_next_run(
    pipeline, runtime, learned_in_one_run
):
    first, second = _halves()
    team_id, keys = _granted(runtime, "moto-late-part", 2)
    reached, release = runtime.hold("handler.chunk")
    holder = pipeline.start(_stored(runtime, keys[0], first))
    assert reached.wait(60)  # the first run holds the session and has parsed the first part alone

    late = pipeline.run(_stored(runtime, keys[1], second))  # the second part's run, meanwhile
    assert late["status"] == "SUCCEEDED"
    assert "Chunk" not in _entered(pipeline.history(late["executionArn"]))
    waiting = _session(runtime, team_id, "moto-late-part")
    assert waiting.status == "received" and holder.endswith(f":{waiting.stats['run']['id']}")
    release.set()
    done = pipeline.wait(holder)

    assert done["status"] == "SUCCEEDED", pipeline.history(done["executionArn"])[-3:]
    entered = _entered(pipeline.history(holder))
    # the holder learned the first part, saw the second recorded meanwhile, and learned again with it
    assert entered.count("Parse") == 2 and entered.count("Reflect") == 2
    assert entered[-2:] == ["PartsArrived", "Learned"]
    assert json.loads(done["output"])["parse"]["parts"] == 2
    session = _session(runtime, team_id, "moto-late-part")
    assert session.status == "learned" and "run" not in session.stats
    assert session.stats["parse"]["parts"] == 2
    learned = _learned(runtime, team_id, "moto-late-part")
    assert max(learned.values()) == 1
    # everything one run over both parts learns is there (the first run's view of part 1 alone, e.g. a
    # todo list left unfinished there, is kept as local mode keeps it)
    assert not learned_in_one_run - learned
    assert pipeline.dead_letters() == []


def test_a_run_that_fails_lets_its_session_go_so_the_next_part_is_learned(pipeline, runtime):
    first, second = _halves()
    team_id, keys = _granted(runtime, "moto-failed-run", 2)
    runtime.fail_always("handler.consolidate", BrokenStageError("the index is down"))
    assert pipeline.run(_stored(runtime, keys[0], first))["status"] == "FAILED"
    failed = _session(runtime, team_id, "moto-failed-run")
    assert failed.status == "failed" and "run" not in failed.stats

    runtime.reset()
    done = pipeline.run(_stored(runtime, keys[1], second))
    assert done["status"] == "SUCCEEDED"
    assert _entered(pipeline.history(done["executionArn"]))[-1] == "Learned"
    assert _session(runtime, team_id, "moto-failed-run").stats["parse"]["parts"] == 2

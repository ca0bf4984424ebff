"""Step Functions learning pipeline, its trigger and its dead-letter queue."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import function_by_service, resources

pytestmark = pytest.mark.infra

STAGES = ["Parse", "Chunk", "Extract", "Consolidate", "Reflect"]


def _machine(template: dict, suffix: str = "-learning") -> dict:
    """The learning state machine (or, with `suffix="-dream"`, the scheduled dream pass's)."""
    (machine,) = [
        m
        for m in resources(template, "AWS::StepFunctions::StateMachine").values()
        if suffix in json.dumps(m["Properties"].get("StateMachineName", ""))
    ]
    return machine


def _definition(template: dict, suffix: str = "-learning") -> dict:
    machine = _machine(template, suffix)
    body = machine["Properties"]["DefinitionString"]
    if isinstance(body, dict):  # Fn::Join of literals and GetAtt tokens
        body = "".join(part if isinstance(part, str) else "TOKEN" for part in body["Fn::Join"][1])
    return json.loads(body)


def _all_states(definition: dict) -> dict[str, dict]:
    states = dict(definition["States"])
    for state in definition["States"].values():
        if state["Type"] == "Map":
            states.update(_all_states(state["ItemProcessor"]))
    return states


@pytest.fixture(scope="module")
def definition(synth) -> dict:
    return _definition(synth.json["dev"])


def test_stages_run_parse_chunk_map_extract_consolidate_reflect_in_order(definition):
    states = definition["States"]
    assert states[states[definition["StartAt"]]["Next"]] is states["Parse"]
    # a run that finds its session held by another ends; otherwise it learns
    held = states[states["Parse"]["Next"]]
    assert held["Type"] == "Choice" and held["Default"] == "Chunk"
    [when] = held["Choices"]
    assert when["Variable"] == "$.parse.learned_by" and when["IsPresent"] is True
    assert states[when["Next"]]["Type"] == "Succeed"
    assert states["Chunk"]["Next"] == "ExtractChunks"
    assert states["ExtractChunks"]["Type"] == "Map"
    assert states["ExtractChunks"]["ItemsPath"] == "$.chunk.chunks"
    assert states["ExtractChunks"]["ItemProcessor"]["StartAt"] == "Extract"
    assert states["ExtractChunks"]["Next"] == "Consolidate"
    assert states["Consolidate"]["Next"] == "Reflect"
    # the project's dream pass once the session is learned; its failure leaves the session learned
    assert states["Reflect"]["Next"] == "Dream"
    assert [(c["ErrorEquals"], c["Next"]) for c in states["Dream"]["Catch"]] == [
        (["States.ALL"], "PartsArrived")
    ]
    # parts recorded during the run: learn again, from parse
    arrived = states[states["Dream"]["Next"]]
    assert arrived["Type"] == "Choice" and states[arrived["Default"]]["Type"] == "Succeed"
    assert arrived["Choices"] == [{"Variable": "$.reflect.again", "BooleanEquals": True, "Next": "Parse"}]


def test_a_run_holds_its_session_longer_than_an_execution_can_live(synth):
    from cairn.pipeline.stages.status import RUN_HOLD

    machine = _machine(synth.json["dev"])
    definition = _definition(synth.json["dev"])
    timeout = definition.get("TimeoutSeconds") or machine["Properties"].get("TimeoutSeconds")
    assert timeout and timeout < RUN_HOLD.total_seconds()


def test_the_source_state_names_the_run(definition):
    source = definition["States"][definition["StartAt"]]
    assert source["Parameters"]["source"]["run.$"] == "$$.Execution.Name"


def test_every_lambda_task_retries_with_exponential_backoff_and_catches_all_errors(definition):
    states = _all_states(definition)
    tasks = {name: s for name, s in states.items() if s["Type"] == "Task" and name in STAGES}
    assert sorted(tasks) == sorted(STAGES)
    for name, task in tasks.items():
        assert task["Retry"], name
        assert any(r.get("BackoffRate", 1) > 1 and r["MaxAttempts"] >= 2 for r in task["Retry"]), name
        assert any("States.TaskFailed" in r["ErrorEquals"] for r in task["Retry"]), name
        assert [c["ErrorEquals"] for c in task["Catch"]] == [["States.ALL"]], name


def test_every_failure_path_marks_the_session_failed_then_dead_letters_then_fails(definition):
    states = definition["States"]
    for name in ("Parse", "Chunk", "ExtractChunks", "Consolidate", "Reflect"):
        assert states[name]["Catch"][0]["Next"] == "Fail", name
    mark_failed = states["Fail"]
    assert mark_failed["Type"] == "Task" and mark_failed["Next"] == "SendToDeadLetter"
    # if marking the session fails too, the state is still dead-lettered
    assert mark_failed["Catch"][0]["Next"] == "SendToDeadLetter"
    dlq = states["SendToDeadLetter"]
    assert dlq["Resource"].endswith(":states:::sqs:sendMessage")
    assert states[dlq["Next"]]["Type"] == "Fail"
    # a chunk that keeps failing fails the Map, whose catch sends to the DLQ
    inner = definition["States"]["ExtractChunks"]["ItemProcessor"]["States"]
    assert inner[inner["Extract"]["Catch"][0]["Next"]]["Type"] == "Fail"


def test_a_schedule_starts_the_dream_pass_over_every_project_through_its_own_state_machine(synth, dev):
    from infra.units.pipeline import DREAM_EVERY

    definition = _definition(synth.json["dev"], "-dream")
    (task,) = definition["States"].values()
    assert task["Type"] == "Task" and task.get("End") is True
    assert task["Retry"]
    dev.has_resource_properties(
        "AWS::Events::Rule",
        {
            "ScheduleExpression": f"rate({DREAM_EVERY.to_hours()} hours)",
            "Targets": [
                Match.object_like(
                    {
                        "Arn": {"Ref": Match.string_like_regexp("DreamMachine")},
                        "Input": json.dumps({"scheduled": True}, separators=(",", ":")),
                        "DeadLetterConfig": {"Arn": Match.any_value()},
                    }
                )
            ],
        },
    )
    # the task invokes the dream stage's function (the same code as after each session)
    fn_id, _ = function_by_service(synth.json["dev"], "cairn-pipeline", "handler.dream")
    assert fn_id in json.dumps(_machine(synth.json["dev"], "-dream")["Properties"]["DefinitionString"])


def test_definition_is_jsonpath_not_jsonata(synth, definition):
    assert definition.get("QueryLanguage", "JSONPath") == "JSONPath"
    assert "JSONata" not in json.dumps(synth.json["dev"]["Resources"])


def test_state_machine_is_standard_traced_and_logs_every_event(dev):
    dev.has_resource_properties(
        "AWS::StepFunctions::StateMachine",
        {
            "StateMachineType": "STANDARD",
            "TracingConfiguration": {"Enabled": True},
            "LoggingConfiguration": Match.object_like({"Level": "ALL"}),
        },
    )


def test_transcript_uploads_under_teams_with_jsonl_gz_suffix_start_the_pipeline(dev):
    dev.has_resource_properties(
        "AWS::Events::Rule",
        {
            "EventPattern": {
                "source": ["aws.s3"],
                "detail-type": ["Object Created"],
                "detail": {
                    "bucket": {"name": [{"Ref": Match.string_like_regexp("StorageTranscripts")}]},
                    "object": {"key": [{"wildcard": "teams/*.jsonl.gz"}]},
                },
            },
            "Targets": [
                Match.object_like(
                    {
                        "Arn": {"Ref": Match.string_like_regexp("StateMachine")},
                        "DeadLetterConfig": {"Arn": Match.any_value()},
                    }
                )
            ],
        },
    )


def test_dead_letter_queues_are_kms_encrypted_and_refuse_plain_http(synth):
    for template in synth.json.values():
        queues = resources(template, "AWS::SQS::Queue")
        assert len(queues) == 2
        for queue in queues.values():
            assert "KmsMasterKeyId" in queue["Properties"]
        for policy in resources(template, "AWS::SQS::QueuePolicy").values():
            assert any(
                s["Effect"] == "Deny" and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}
                for s in policy["Properties"]["PolicyDocument"]["Statement"]
            )


def test_every_15_minutes_a_sweep_fails_sessions_whose_upload_never_came(synth):
    dev_json = synth.json["dev"]
    fn_id, _ = function_by_service(dev_json, "cairn-sweeper", "handler.handler")
    rules = [
        r["Properties"]
        for r in resources(dev_json, "AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"] and "Sweep" in str(r["Properties"]["Targets"])
    ]
    assert [r["ScheduleExpression"] for r in rules] == ["rate(15 minutes)"]
    (target,) = rules[0]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [fn_id, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2
    permissions = resources(dev_json, "AWS::Lambda::Permission").values()
    assert any(
        p["Properties"]["FunctionName"] == {"Fn::GetAtt": [fn_id, "Arn"]}
        and p["Properties"]["Principal"] == "events.amazonaws.com"
        for p in permissions
    )

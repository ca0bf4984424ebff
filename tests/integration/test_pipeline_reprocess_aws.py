"""Reprocess in AWS mode: an execution of the state machine is started with an EventBridge-shaped input."""

from __future__ import annotations

import json

import boto3
import pytest
from cairn.pipeline.running.step_functions import StepFunctionsPipelineRunner
from moto import mock_aws

from tests.integration.pipeline_helpers import claude_transcript, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]
DEFINITION = {"StartAt": "Source", "States": {"Source": {"Type": "Pass", "End": True}}}


@pytest.fixture
def sfn():
    with mock_aws():
        client = boto3.client("stepfunctions", region_name="eu-west-1")
        arn = client.create_state_machine(
            name="cairn-test-learning",
            definition=json.dumps(DEFINITION),
            roleArn="arn:aws:iam::123456789012:role/sfn",
        )["stateMachineArn"]
        yield client, arn


def test_reprocess_starts_an_execution_for_the_last_part_and_force_clears_stage_outputs(
    container, api, team_a, sfn
):
    client, arn = sfn
    raw = claude_transcript("aws-1", [("user", "Let's use Redis for the job queue.")])
    learn(container, api, team_a.headers, raw=raw, session_id="aws-1", project="github.com/acme/app")
    session = container.sessions.get(team_a.team_id, "aws-1")
    stages = [
        k for k in container.blobs.list(session.transcript_keys[0].rsplit("/", 1)[0]) if "/stages/" in k
    ]
    assert stages

    container.runner = StepFunctionsPipelineRunner(container.pipeline, arn, "cairn-dev-transcripts", client)
    resp = api.post("/v1/sessions/aws-1/reprocess", headers=team_a.headers, json={"force": True})
    assert resp.status_code == 202
    [execution] = client.list_executions(stateMachineArn=arn)["executions"]
    started = json.loads(client.describe_execution(executionArn=execution["executionArn"])["input"])
    assert started["detail"]["object"]["key"] == session.transcript_keys[-1]
    assert started["detail"]["bucket"]["name"] == "cairn-dev-transcripts"
    assert not [
        k for k in container.blobs.list(session.transcript_keys[0].rsplit("/", 1)[0]) if "/stages/" in k
    ]
    assert container.blobs.exists(session.transcript_keys[0])  # the transcript itself is kept

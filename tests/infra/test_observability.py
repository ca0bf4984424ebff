"""Alarms per environment, delivered to an encrypted topic."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import resources

pytestmark = pytest.mark.infra


def _alarm_metrics(template: dict) -> set[tuple[str, str]]:
    return {
        (a["Properties"]["Namespace"], a["Properties"]["MetricName"])
        for a in resources(template, "AWS::CloudWatch::Alarm").values()
    }


def test_prod_alarms_on_api_5xx_lambda_errors_dlq_depth_pipeline_failures_and_red_cluster(synth):
    metrics = _alarm_metrics(synth.json["prod"])
    assert {
        ("AWS/ApiGateway", "5XXError"),
        ("AWS/Lambda", "Errors"),
        ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
        ("AWS/States", "ExecutionsFailed"),
        ("AWS/ES", "ClusterStatus.red"),
    } <= metrics
    lambda_alarms = [
        a
        for a in resources(synth.json["prod"], "AWS::CloudWatch::Alarm").values()
        if a["Properties"]["MetricName"] == "Errors"
    ]
    assert len(lambda_alarms) == len(resources(synth.json["prod"], "AWS::Lambda::Function"))


def test_every_prod_alarm_notifies_the_alarm_topic(prod, synth):
    (topic_id,) = resources(synth.json["prod"], "AWS::SNS::Topic")
    for alarm in resources(synth.json["prod"], "AWS::CloudWatch::Alarm").values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]


def test_dev_has_no_alarms_to_stay_cheap(synth):
    assert resources(synth.json["dev"], "AWS::CloudWatch::Alarm") == {}


def test_alarm_topic_is_kms_encrypted(dev, prod):
    for template in (dev, prod):
        template.has_resource_properties("AWS::SNS::Topic", {"KmsMasterKeyId": Match.any_value()})


def test_customer_managed_key_rotates_and_lets_cloudwatch_publish(prod):
    prod.has_resource_properties(
        "AWS::KMS::Key",
        {
            "EnableKeyRotation": True,
            "KeyPolicy": {
                "Statement": Match.array_with(
                    [Match.object_like({"Principal": {"Service": "cloudwatch.amazonaws.com"}})]
                )
            },
        },
    )

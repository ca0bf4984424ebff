"""Alarms in every environment, with each environment's thresholds, delivered to an encrypted topic; a
dashboard of the same signals and the business metrics."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match
from cairn.domain.ports import BusinessMetric

from infra.config import get_config
from infra.units.observability import BUSINESS_METRICS
from tests.infra.conftest import ENVIRONMENTS, resources

pytestmark = pytest.mark.infra

#: alarm (logical id prefix) -> (namespace, metric name) it watches, or None for a metric math alarm
SIGNALS = {
    "Api5xx": ("AWS/ApiGateway", "5XXError"),
    "Api4xxRate": None,
    "ApiLatencyP99": ("AWS/ApiGateway", "Latency"),
    "IndexerIteratorAge": ("AWS/Lambda", "IteratorAge"),
    "SearchClusterRed": ("AWS/ES", "ClusterStatus.red"),
    "SearchJvmPressure": ("AWS/ES", "JVMMemoryPressure"),
    "SearchFreeStorage": ("AWS/ES", "FreeStorageSpace"),
    "SearchKnnMemory": ("AWS/ES", "KNNGraphMemoryUsagePercentage"),
    "SearchKnnCircuitBreaker": ("AWS/ES", "KNNCircuitBreakerTriggered"),
    "TableReadThrottles": ("AWS/DynamoDB", "ReadThrottleEvents"),
    "TableWriteThrottles": ("AWS/DynamoDB", "WriteThrottleEvents"),
    "PipelineFailures": ("AWS/States", "ExecutionsFailed"),
    "RecallDegraded": None,
}


def _alarms(template: dict) -> dict[str, dict]:
    """alarm logical id (without CDK's hash suffix and the Observability prefix) -> properties"""
    out = {}
    for logical_id, alarm in resources(template, "AWS::CloudWatch::Alarm").items():
        name = logical_id.removeprefix("Observability")[:-8]
        out[name] = alarm["Properties"]
    return out


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_environment_alarms_on_each_signal_the_issue_lists(synth, env):
    alarms = _alarms(synth.json[env])
    for name, signal in SIGNALS.items():
        assert name in alarms, f"{env} has no {name} alarm"
        if signal is not None:
            props = alarms[name]
            assert (props["Namespace"], props["MetricName"]) == signal, name
    lambda_alarms = [a for a in alarms.values() if a.get("MetricName") == "Errors"]
    assert len(lambda_alarms) == len(resources(synth.json[env], "AWS::Lambda::Function"))
    assert {"PipelineDepth", "IndexerDepth", "Api429"} <= set(alarms)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_thresholds_are_the_environments_own(synth, env):
    limits = get_config(env).alarms
    alarms = _alarms(synth.json[env])
    expected = {
        "Api5xx": limits.api_5xx,
        "Api4xxRate": limits.api_4xx_rate,
        "Api429": limits.api_429,
        "ApiLatencyP99": limits.api_latency_p99_ms,
        "IndexerIteratorAge": limits.stream_iterator_age_ms,
        "SearchJvmPressure": limits.search_jvm_pressure_pct,
        "SearchFreeStorage": limits.search_free_storage_mb,
        "SearchKnnMemory": limits.search_knn_memory_pct,
        "TableReadThrottles": limits.dynamo_throttles,
        "RecallDegraded": limits.recall_degraded,
    }
    for name, threshold in expected.items():
        assert alarms[name]["Threshold"] == threshold, name
    assert alarms["SearchFreeStorage"]["ComparisonOperator"] == "LessThanOrEqualToThreshold"
    assert alarms["ApiLatencyP99"]["ExtendedStatistic"] == "p99"


def test_dev_has_its_own_looser_thresholds_than_prod():
    dev, prod = get_config("dev").alarms, get_config("prod").alarms
    assert dev != prod
    assert dev.api_latency_p99_ms > prod.api_latency_p99_ms
    assert dev.stream_iterator_age_ms > prod.stream_iterator_age_ms


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_429s_are_counted_from_the_json_access_log(synth, env):
    template = synth.json[env]
    [metric_filter] = resources(template, "AWS::Logs::MetricFilter").values()
    props = metric_filter["Properties"]
    assert props["FilterPattern"] == "{ $.status = 429 }"
    [transform] = props["MetricTransformations"]
    alarm = _alarms(template)["Api429"]
    assert (alarm["Namespace"], alarm["MetricName"]) == (
        transform["MetricNamespace"],
        transform["MetricName"],
    )
    assert env in transform["MetricNamespace"]  # stacks sharing an account keep their counts apart
    [access_logs] = [k for k in resources(template, "AWS::Logs::LogGroup") if k.startswith("ApiAccessLogs")]
    assert props["LogGroupName"] == {"Ref": access_logs}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_degraded_recall_alarm_sums_the_emf_metric_of_the_api_and_mcp_functions(synth, env):
    alarm = _alarms(synth.json[env])["RecallDegraded"]
    metrics = [q["MetricStat"]["Metric"] for q in alarm["Metrics"] if "MetricStat" in q]
    assert {m["Namespace"] for m in metrics} == {"Cairn"}
    assert {m["MetricName"] for m in metrics} == {"RecallDegraded"}
    dims = [{d["Name"]: d["Value"] for d in m["Dimensions"]} for m in metrics]
    assert sorted(d["service"] for d in dims) == ["cairn-api", "cairn-mcp"]
    assert {d["environment"] for d in dims} == {env}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_alarm_notifies_the_alarm_topic(synth, env):
    (topic_id,) = resources(synth.json[env], "AWS::SNS::Topic")
    for alarm in resources(synth.json[env], "AWS::CloudWatch::Alarm").values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_each_environment_has_a_dashboard_of_the_signals_and_the_business_metrics(synth, env):
    [dashboard] = resources(synth.json[env], "AWS::CloudWatch::Dashboard").values()
    assert dashboard["Properties"]["DashboardName"] == f"cairn-{env}-overview"
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for needle in (
        "IteratorAge",
        "Latency",
        "4XXError",
        "Status429",
        "JVMMemoryPressure",
        "FreeStorageSpace",
        "KNNGraphMemoryUsagePercentage",
        "ReadThrottleEvents",
        *BUSINESS_METRICS,
    ):
        assert needle in body, needle
    assert "alarm" in body  # the alarm status widget


def test_the_dashboard_reads_the_names_the_code_writes():
    written = {v for k, v in vars(BusinessMetric).items() if k.isupper()}
    assert set(BUSINESS_METRICS) == written


def test_every_lambda_writes_business_metrics_as_emf(synth):
    for template in synth.json.values():
        for fn in resources(template, "AWS::Lambda::Function").values():
            variables = fn["Properties"]["Environment"]["Variables"]
            assert variables["CAIRN_METRICS"] == "emf"
            assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "Cairn"


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

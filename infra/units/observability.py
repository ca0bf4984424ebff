"""Alarms in every environment (thresholds per environment, infra/config.py) to an encrypted SNS topic, and
one CloudWatch dashboard of the same signals plus Cairn's business metrics.

What is watched: API 5xx, 4xx share and 429s (throttled or over a team's quota), API latency p99; each
Lambda's errors; the indexer's lag behind the table's stream (iterator age); dead-letter depth and failed
pipeline runs; OpenSearch red status, JVM memory pressure, free storage, k-NN graph memory and its circuit
breaker; DynamoDB throttles; and degraded recall, a business metric the API and MCP functions write as EMF.
"""

from __future__ import annotations

from aws_cdk import Duration, Tags
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.shared_layer import METRICS_NAMESPACE
from infra.units.storage import Storage

PERIOD = Duration.minutes(5)
#: The business metrics `cairn.domain.ports.BusinessMetric` names (tests/infra checks they agree).
BUSINESS_METRICS = ("SessionsLearned", "MemoriesWritten", "RecallDegraded", "Abstentions")
#: The functions that write each business metric (the EMF `service` dimension).
BUSINESS_SERVICES = {
    "SessionsLearned": ("cairn-pipeline",),
    "MemoriesWritten": ("cairn-api", "cairn-mcp", "cairn-pipeline"),
    "RecallDegraded": ("cairn-api", "cairn-mcp"),
    "Abstentions": ("cairn-api", "cairn-mcp"),
}


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvironmentConfig,
        storage: Storage,
        alarm_email: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.storage = storage
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            display_name=f"Cairn {config.name} alarms",
            master_key=storage.key,
            enforce_ssl=True,
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self.alarms: list[cloudwatch.Alarm] = []
        self.dashboard: cloudwatch.Dashboard | None = None

    def watch(
        self,
        *,
        rest_api: apigw.RestApi,
        access_logs: logs.ILogGroup,
        functions: dict[str, lambda_.IFunction],
        indexer: lambda_.IFunction,
        queues: dict[str, sqs.IQueue],
        state_machine: sfn.StateMachine,
        domain: opensearch.Domain,
    ) -> None:
        limits = self.config.alarms
        table = self.storage.table

        # --- API -------------------------------------------------------------------------------
        api_5xx = rest_api.metric_server_error(period=PERIOD, statistic="Sum")
        api_4xx = rest_api.metric_client_error(period=PERIOD, statistic="Sum")
        api_count = rest_api.metric_count(period=PERIOD, statistic="Sum")
        api_429 = self._status_429(access_logs)
        latency_p99 = rest_api.metric_latency(period=PERIOD, statistic="p99")
        self._alarm("Api5xx", api_5xx, limits.api_5xx, "API Gateway 5xx responses")
        self._alarm(
            "Api4xxRate",
            cloudwatch.MathExpression(
                expression="IF(requests > 0, errors / requests, 0)",
                using_metrics={"errors": api_4xx, "requests": api_count},
                period=PERIOD,
                label="4xx share",
            ),
            limits.api_4xx_rate,
            "share of API requests answered 4xx (bad keys or input, quotas)",
        )
        self._alarm("Api429", api_429, limits.api_429, "API answers 429: throttled or over a team's quota")
        self._alarm(
            "ApiLatencyP99", latency_p99, limits.api_latency_p99_ms, "API latency p99 (ms; hooks wait 3 s)"
        )

        # --- functions, queues, pipeline --------------------------------------------------------
        for name, fn in functions.items():
            self._alarm(
                f"{name}Errors",
                fn.metric_errors(period=PERIOD, statistic="Sum"),
                limits.lambda_errors,
                f"Lambda {name} errors",
            )
        iterator_age = indexer.metric("IteratorAge", period=PERIOD, statistic="Maximum")
        self._alarm(
            "IndexerIteratorAge",
            iterator_age,
            limits.stream_iterator_age_ms,
            "stream indexer lag behind the table (iterator age, ms): recall misses new memories",
        )
        for name, queue in queues.items():
            self._alarm(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                1,
                f"Messages waiting in the {name} dead-letter queue",
            )
        self._alarm(
            "PipelineFailures",
            state_machine.metric_failed(period=PERIOD, statistic="Sum"),
            1,
            "Learning pipeline executions failed",
        )

        # --- OpenSearch ---------------------------------------------------------------------------
        minute = Duration.minutes(1)
        self._alarm(
            "SearchClusterRed",
            domain.metric_cluster_status_red(period=minute, statistic="Maximum"),
            1,
            "OpenSearch cluster status red",
        )
        jvm = domain.metric_jvm_memory_pressure(period=PERIOD, statistic="Maximum")
        self._alarm(
            "SearchJvmPressure", jvm, limits.search_jvm_pressure_pct, "OpenSearch JVM memory pressure"
        )
        free_storage = domain.metric_free_storage_space(period=PERIOD, statistic="Minimum")
        self._alarm(
            "SearchFreeStorage",
            free_storage,
            limits.search_free_storage_mb,
            "OpenSearch free storage (MB, least of any node)",
            below=True,
        )
        knn_memory = domain.metric("KNNGraphMemoryUsagePercentage", period=PERIOD, statistic="Maximum")
        self._alarm(
            "SearchKnnMemory", knn_memory, limits.search_knn_memory_pct, "OpenSearch k-NN graph memory use"
        )
        self._alarm(
            "SearchKnnCircuitBreaker",
            domain.metric("KNNCircuitBreakerTriggered", period=minute, statistic="Maximum"),
            1,
            "OpenSearch k-NN circuit breaker tripped: vector queries are refused",
        )

        # --- DynamoDB ---------------------------------------------------------------------------
        throttles = {
            kind: table.metric(f"{kind}ThrottleEvents", period=PERIOD, statistic="Sum")
            for kind in ("Read", "Write")
        }
        for kind, metric in throttles.items():
            self._alarm(
                f"Table{kind}Throttles", metric, limits.dynamo_throttles, f"DynamoDB {kind} throttles"
            )

        # --- business -----------------------------------------------------------------------------
        business = {name: self._business(name) for name in BUSINESS_METRICS}
        self._alarm(
            "RecallDegraded",
            business["RecallDegraded"],
            limits.recall_degraded,
            "recalls answered degraded (search engine or embedding down: keyword fallback)",
        )

        self.dashboard = cloudwatch.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"{self.config.resource_prefix}-overview",
            widgets=[
                [
                    self._graph("API requests and errors", [api_count, api_4xx, api_5xx, api_429]),
                    self._graph("API latency p99 (ms)", [latency_p99]),
                    self._graph("Indexer lag (iterator age, ms)", [iterator_age]),
                ],
                [
                    self._graph(
                        "Lambda errors",
                        [fn.metric_errors(period=PERIOD, statistic="Sum") for fn in functions.values()],
                    ),
                    self._graph(
                        "Lambda duration p99 (ms)",
                        [fn.metric_duration(period=PERIOD, statistic="p99") for fn in functions.values()],
                    ),
                    self._graph("DynamoDB throttles", list(throttles.values())),
                ],
                [
                    self._graph("OpenSearch JVM and k-NN memory (%)", [jvm, knn_memory]),
                    self._graph("OpenSearch free storage (MB)", [free_storage]),
                    self._graph(
                        "Pipeline",
                        [
                            state_machine.metric_succeeded(period=PERIOD, statistic="Sum"),
                            state_machine.metric_failed(period=PERIOD, statistic="Sum"),
                        ],
                    ),
                ],
                [
                    self._graph(
                        "Sessions learned, memories written",
                        [business["SessionsLearned"], business["MemoriesWritten"]],
                    ),
                    self._graph(
                        "Recall degraded, abstentions", [business["RecallDegraded"], business["Abstentions"]]
                    ),
                    cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=8),
                ],
            ],
        )

        # AWS::CloudWatch::Dashboard takes no Tags (cfn-lint E3002): keep the stack's tags off it
        for key in ("app", "environment"):
            Tags.of(self.dashboard).remove(key)

    def _status_429(self, access_logs: logs.ILogGroup) -> cloudwatch.IMetric:
        """API Gateway publishes no 429 count of its own: a filter on the JSON access log counts them."""
        namespace = f"{METRICS_NAMESPACE}/{self.config.name}/AccessLogs"
        logs.MetricFilter(
            self,
            "Api429Filter",
            log_group=access_logs,
            filter_pattern=logs.FilterPattern.number_value("$.status", "=", 429),
            metric_namespace=namespace,
            metric_name="Status429",
            metric_value="1",
            default_value=0,
        )
        return cloudwatch.Metric(namespace=namespace, metric_name="Status429", period=PERIOD, statistic="Sum")

    def _business(self, name: str) -> cloudwatch.IMetric:
        """A business metric summed over the functions that write it (EMF: service + environment)."""
        parts = {
            f"{name.lower()}{i}": cloudwatch.Metric(
                namespace=METRICS_NAMESPACE,
                metric_name=name,
                dimensions_map={"service": service, "environment": self.config.name},
                period=PERIOD,
                statistic="Sum",
            )
            for i, service in enumerate(BUSINESS_SERVICES[name])
        }
        return cloudwatch.MathExpression(
            expression=" + ".join(f"FILL({p}, 0)" for p in parts),
            using_metrics=parts,
            period=PERIOD,
            label=name,
        )

    @staticmethod
    def _graph(title: str, metrics: list[cloudwatch.IMetric]) -> cloudwatch.GraphWidget:
        return cloudwatch.GraphWidget(title=title, left=metrics, width=8)

    def _alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        *,
        below: bool = False,
    ) -> None:
        comparison = (
            cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD
            if below
            else cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        )
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_description=f"Cairn {self.config.name}: {description}",
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)

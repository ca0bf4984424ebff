"""Alarms (per environment) to an encrypted SNS topic."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.storage import Storage

PERIOD = Duration.minutes(5)


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

    def watch(
        self,
        *,
        rest_api: apigw.RestApi,
        functions: dict[str, lambda_.IFunction],
        queues: dict[str, sqs.IQueue],
        state_machine: sfn.StateMachine,
        domain: opensearch.Domain,
    ) -> None:
        if not self.config.alarms_enabled:
            return
        self._alarm(
            "Api5xx",
            rest_api.metric_server_error(period=PERIOD, statistic="Sum"),
            threshold=5,
            description="API Gateway 5xx responses",
        )
        for name, fn in functions.items():
            self._alarm(
                f"{name}Errors",
                fn.metric_errors(period=PERIOD, statistic="Sum"),
                threshold=1,
                description=f"Lambda {name} errors",
            )
        for name, queue in queues.items():
            self._alarm(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                threshold=1,
                description=f"Messages waiting in the {name} dead-letter queue",
            )
        self._alarm(
            "PipelineFailures",
            state_machine.metric_failed(period=PERIOD, statistic="Sum"),
            threshold=1,
            description="Learning pipeline executions failed",
        )
        self._alarm(
            "SearchClusterRed",
            domain.metric_cluster_status_red(period=Duration.minutes(1), statistic="Maximum"),
            threshold=1,
            description="OpenSearch cluster status red",
        )

    def _alarm(
        self, construct_id: str, metric: cloudwatch.IMetric, *, threshold: float, description: str
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_description=f"Cairn {self.config.name}: {description}",
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)

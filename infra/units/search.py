"""The OpenSearch domain (derived, rebuildable index) and the indexer fed by the table's stream."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.shared_layer import SharedRuntime
from infra.units.storage import Storage

ENGINE_VERSION = opensearch.EngineVersion.OPENSEARCH_2_19


class Search(Construct):
    """OpenSearch domain: HTTPS only, encrypted at rest and between nodes, SigV4 access for named roles."""

    def __init__(self, scope: Construct, construct_id: str, *, config: EnvironmentConfig) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self._principals: list[iam.IRole] = []
        # the memories index of OpenSearchIndex(prefix=config.resource_prefix): "<prefix>-memories"
        self._index_pattern = f"{config.resource_prefix}-memories*"
        stack = Stack.of(self)
        self.domain_arn = stack.format_arn(
            service="es", resource="domain", resource_name=config.opensearch_domain_name
        )

        self.slow_logs = logs.LogGroup(
            self, "SlowLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        self.app_logs = logs.LogGroup(
            self, "AppLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        # The logs resource policy OpenSearch needs, declared here instead of CDK's custom-resource Lambda.
        log_policy = logs.CfnResourcePolicy(
            self,
            "LogsPolicy",
            policy_name=f"{config.resource_prefix}-opensearch-logs",
            policy_document=stack.to_json_string(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "es.amazonaws.com"},
                            "Action": ["logs:PutLogEvents", "logs:CreateLogStream"],
                            "Resource": [self.slow_logs.log_group_arn, self.app_logs.log_group_arn],
                            "Condition": {"StringEquals": {"aws:SourceAccount": stack.account}},
                        }
                    ],
                }
            ),
        )

        multi_az = config.opensearch_availability_zones > 1
        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=config.opensearch_domain_name,
            version=ENGINE_VERSION,
            capacity=opensearch.CapacityConfig(
                data_nodes=config.opensearch_data_nodes,
                data_node_instance_type=config.opensearch_instance_type,
                master_nodes=config.opensearch_master_nodes or None,
                master_node_instance_type=config.opensearch_master_instance_type,
                multi_az_with_standby_enabled=False,
            ),
            ebs=opensearch.EbsOptions(
                enabled=True,
                volume_size=config.opensearch_volume_gb,
                volume_type=ec2.EbsDeviceVolumeType.GP3,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(
                enabled=multi_az,
                availability_zone_count=config.opensearch_availability_zones if multi_az else None,
            ),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            logging=opensearch.LoggingOptions(
                slow_search_log_enabled=True,
                slow_search_log_group=self.slow_logs,
                slow_index_log_enabled=True,
                slow_index_log_group=self.slow_logs,
                app_log_enabled=True,
                app_log_group=self.app_logs,
            ),
            suppress_logs_resource_policy=True,
            removal_policy=config.removal_policy,
        )
        self.domain.node.add_dependency(log_policy)
        # The resource policy is set on the CfnDomain itself (Domain(access_policies=...) would add a custom
        # resource Lambda); it lists every role registered through grant_http().
        self._cfn_domain: opensearch.CfnDomain = self.domain.node.default_child  # type: ignore[assignment]

    @property
    def endpoint_url(self) -> str:
        # LocalStack serves every domain over plain HTTP on its gateway (EnforceHTTPS is not emulated).
        scheme = "http" if self.config.emulated else "https"
        return f"{scheme}://{self.domain.domain_endpoint}"

    @property
    def client_environment(self) -> dict[str, str]:
        """The settings every function that embeds or queries the index needs (see cairn.settings)."""
        return {
            "CAIRN_OPENSEARCH_ENDPOINT": self.endpoint_url,
            "CAIRN_OPENSEARCH_INDEX_PREFIX": self.config.resource_prefix,
            "CAIRN_EMBEDDING_DIM": str(self.config.embedding_dim),
            "CAIRN_OPENSEARCH_SHARDS": str(self.config.opensearch_index_shards),
            "CAIRN_OPENSEARCH_REPLICAS": str(self.config.opensearch_index_replicas),
        }

    def grant_http(self, role: iam.IRole) -> None:
        """es:ESHttp* on this domain only, in the role's policy and in the domain's resource policy."""
        self._principals.append(role)
        self._cfn_domain.access_policies = self._access_policy()
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"],
                resources=[self.domain_arn, f"{self.domain_arn}/*"],
            )
        )

    def grant_search(self, role: iam.IRole) -> None:
        """Read-only queries (search, _msearch) on this domain; no index or document writes."""
        self._principals.append(role)
        self._cfn_domain.access_policies = self._access_policy()
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"],
                resources=[f"{self.domain_arn}/{self._index_pattern}"],
            )
        )

    def _access_policy(self) -> dict:
        return {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": [r.role_arn for r in self._principals]},
                    "Action": "es:ESHttp*",
                    "Resource": f"{self.domain_arn}/*",
                }
            ],
        }


class Indexer(Construct):
    """DynamoDB Streams -> indexer Lambda -> OpenSearch; failed batches go to their own encrypted DLQ."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvironmentConfig,
        runtime: SharedRuntime,
        storage: Storage,
        search: Search,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter = storage.dead_letter_queue(self, config)
        self.function = runtime.function(
            self,
            "Function",
            code_dir="indexer",
            handler="handler.handler",
            service="cairn-indexer",
            description="DynamoDB stream -> OpenSearch index",
            memory_mb=config.stage_memory_mb,
            timeout=Duration.minutes(2),
            environment={
                "CAIRN_TABLE_NAME": storage.table.table_name,
                **search.client_environment,
            },
        )
        storage.table.grant_stream_read(self.function)
        search.grant_http(self.function.role)  # type: ignore[arg-type]
        self.function.add_event_source(
            sources.DynamoEventSource(
                storage.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=100,
                max_batching_window=Duration.seconds(2),
                bisect_batch_on_error=True,
                retry_attempts=5,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.dead_letter),
            )
        )

"""Typed, per-environment settings of the Cairn stack.

Everything that differs between dev, staging, prod and local lives here and nowhere else; the constructs read
an ``EnvironmentConfig`` and never branch on the environment's name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from aws_cdk import RemovalPolicy
from aws_cdk import aws_logs as logs

from infra.platform import LAMBDA_ARCHITECTURE, PYTHON_VERSION

__all__ = [
    "ENVIRONMENTS",
    "LAMBDA_ARCHITECTURE",
    "PYTHON_VERSION",
    "AlarmThresholds",
    "EnvironmentConfig",
    "get_config",
]


@dataclass(frozen=True)
class AlarmThresholds:
    """When each alarm of infra/units/observability.py fires (per 5-minute period unless said otherwise).

    Every environment alarms; dev's thresholds are looser (a developer's own traffic: bursts of tests,
    a t3.small domain that runs warm) so that it pages on breakage, not on being small.
    """

    api_5xx: int = 5  # 5xx answers
    api_4xx_rate: float = 0.25  # share of requests answered 4xx (bad keys, bad input, quotas)
    api_429: int = 20  # answers throttled or over a team's quota
    api_latency_p99_ms: int = 3_000  # hooks give up at 3 s
    lambda_errors: int = 1
    stream_iterator_age_ms: int = 60_000  # the indexer's lag behind the table's stream
    search_jvm_pressure_pct: int = 85  # sustained over ~92 % the domain blocks writes
    search_free_storage_mb: int = 2_048  # least free space of any data node
    search_knn_memory_pct: int = 80  # k-NN graphs' share of their native-memory budget
    dynamo_throttles: int = 1  # read or write throttle events
    recall_degraded: int = 5  # recalls answered from the keyword fallback or with one leg missing


@dataclass(frozen=True)
class EnvironmentConfig:
    name: str
    removal_policy: RemovalPolicy
    log_retention: logs.RetentionDays
    alarms: AlarmThresholds
    # OpenSearch sizing
    opensearch_instance_type: str
    opensearch_data_nodes: int
    opensearch_volume_gb: int
    opensearch_availability_zones: int  # 1 = no zone awareness
    opensearch_master_instance_type: str | None = None
    opensearch_master_nodes: int = 0
    # API Gateway throttling of the whole stage: every team together (the account's regional limit is
    # 10,000 requests/s shared by all of its APIs)
    throttle_rate_limit: float = 10.0
    throttle_burst_limit: int = 20
    # Each team on its own (infra/units/quotas.py): the usage plan's throttle and daily quota apply per
    # API key, and each team has one (`cairn admin create-team`), which the authorizer names.
    team_rate_limit: float = 5.0
    team_burst_limit: int = 10
    team_daily_quota: int = 20_000
    # When true, every authorized method requires the usage-plan key that the authorizer returns as
    # ``usageIdentifierKey``: per-team throttling and quotas. Off only where the emulator cannot do it.
    require_usage_plan_key: bool = True
    # X-Ray subsegments from the X-Ray SDK (Powertools Tracer) in the API and MCP functions; active tracing
    # traces every invocation either way. The SDK costs ~0.25 s of each cold start (docs/benchmarks.md).
    xray_sdk_tracing: bool = False
    # Lambda sizing
    api_memory_mb: int = 1024
    # Provisioned concurrency of the API and MCP functions: an alias `live` that API Gateway invokes (0: none,
    # API Gateway invokes the function itself). A warm instance skips the cold start (import ~0.75 s for
    # the API, ~1.05 s for MCP, plus the model's first load) for about what its memory costs running all
    # month, so only prod, whose users would hit cold starts after each quiet spell and scale-out, pays it.
    api_provisioned_concurrency: int = 0
    mcp_provisioned_concurrency: int = 0
    # The same for the REQUEST authorizer (512 MB): after idle a hook meets its cold start first, then
    # the API's; one warm 512 MB instance costs ~$5.50/month (docs/deploy.md, "Hooks after idle").
    authorizer_provisioned_concurrency: int = 0
    # Lambda SnapStart on the API and the authorizer where nothing is provisioned (dev, staging): a cold
    # start restores a snapshot taken after init (imports, the container) instead of running init. Python
    # 3.12+ only, published versions only (an alias `live`), never with provisioned concurrency on the same
    # function; LocalStack does not restore snapshots, so `local` leaves it off. docs/deploy.md has the cost.
    snap_start: bool = False
    stage_memory_mb: int = 1024
    log_level: str = "INFO"
    # LLM extraction through Bedrock (infra/units/bedrock.py): a Bedrock model id or inference profile id
    # for the extract stage, e.g. "eu.anthropic.claude-3-haiku-20240307-v1:0"; None keeps the rules.
    # Also settable at synth: `cdk deploy -c env=prod -c extractor_model=<id>`.
    extractor_model: str | None = None
    # Step Functions Map concurrency for the extract stage
    extract_max_concurrency: int = 4
    # Transcript bucket lifecycle (days); None disables the rule
    transcript_transition_days: int | None = None
    transcript_expiry_days: int | None = None
    noncurrent_version_expiry_days: int = 7
    # Search: the memories index. One shard holds a few million 384-d vectors comfortably (HNSW graphs are
    # searched per shard, so more shards mean more graphs per query); a replica per extra zone keeps
    # searches up when a node is lost and spreads the read load. Replicas must be < data nodes.
    embedding_dim: int = 384
    opensearch_index_shards: int = 1
    opensearch_index_replicas: int = 0
    # Deployed to the LocalStack emulator (localstack/deploy.py), not to AWS: the few template differences the
    # emulator needs, each explained in localstack/README.md. Never true for an AWS environment.
    emulated: bool = False

    @property
    def stack_name(self) -> str:
        return f"Cairn-{self.name}"

    @property
    def resource_prefix(self) -> str:
        return f"cairn-{self.name}"

    @property
    def retain_data(self) -> bool:
        return self.removal_policy == RemovalPolicy.RETAIN

    @property
    def opensearch_domain_name(self) -> str:
        # 3-28 chars, lowercase; a fixed name lets the access policy name the domain's ARN without a cycle.
        return self.resource_prefix


_DEV = EnvironmentConfig(
    name="dev",
    snap_start=True,
    removal_policy=RemovalPolicy.DESTROY,
    log_retention=logs.RetentionDays.ONE_WEEK,
    alarms=AlarmThresholds(
        api_5xx=10,
        api_4xx_rate=0.5,
        api_429=50,
        api_latency_p99_ms=5_000,
        lambda_errors=3,
        stream_iterator_age_ms=300_000,
        search_jvm_pressure_pct=90,
        search_free_storage_mb=1_024,
        search_knn_memory_pct=90,
        dynamo_throttles=10,
        recall_degraded=20,
    ),
    opensearch_instance_type="t3.small.search",
    opensearch_data_nodes=1,
    opensearch_volume_gb=10,
    opensearch_availability_zones=1,
    throttle_rate_limit=10,
    throttle_burst_limit=20,
    log_level="DEBUG",
    extract_max_concurrency=2,
    transcript_expiry_days=30,
    noncurrent_version_expiry_days=3,
)

ENVIRONMENTS: dict[str, EnvironmentConfig] = {
    "dev": _DEV,
    # For LocalStack (localstack/deploy.py): dev exactly, plus what the emulator needs (`emulated`).
    # LocalStack's community edition does not meter usage plans: no usage-plan key is required there.
    "local": replace(_DEV, name="local", emulated=True, require_usage_plan_key=False, snap_start=False),
    "staging": EnvironmentConfig(
        name="staging",
        snap_start=True,
        removal_policy=RemovalPolicy.DESTROY,
        log_retention=logs.RetentionDays.ONE_MONTH,
        alarms=AlarmThresholds(),
        opensearch_instance_type="t3.medium.search",
        opensearch_data_nodes=2,
        opensearch_index_replicas=1,
        xray_sdk_tracing=True,
        opensearch_volume_gb=20,
        opensearch_availability_zones=2,
        throttle_rate_limit=25,
        throttle_burst_limit=50,
        team_rate_limit=10,
        team_burst_limit=20,
        team_daily_quota=50_000,
        extract_max_concurrency=4,
        transcript_transition_days=30,
        transcript_expiry_days=90,
        noncurrent_version_expiry_days=7,
    ),
    "prod": EnvironmentConfig(
        name="prod",
        removal_policy=RemovalPolicy.RETAIN,
        log_retention=logs.RetentionDays.THREE_MONTHS,
        alarms=AlarmThresholds(api_5xx=3, api_latency_p99_ms=2_000, search_free_storage_mb=10_240),
        opensearch_instance_type="r7g.large.search",
        opensearch_data_nodes=3,
        opensearch_index_shards=2,
        opensearch_index_replicas=1,
        xray_sdk_tracing=True,
        opensearch_volume_gb=100,
        opensearch_availability_zones=3,
        opensearch_master_instance_type="m7g.large.search",
        opensearch_master_nodes=3,
        throttle_rate_limit=100,
        throttle_burst_limit=200,
        team_rate_limit=25,
        team_burst_limit=50,
        team_daily_quota=200_000,
        api_memory_mb=2048,
        api_provisioned_concurrency=2,
        mcp_provisioned_concurrency=1,
        authorizer_provisioned_concurrency=1,
        stage_memory_mb=2048,
        extract_max_concurrency=10,
        transcript_transition_days=30,
        transcript_expiry_days=365,
        noncurrent_version_expiry_days=30,
    ),
}


def get_config(name: str) -> EnvironmentConfig:
    try:
        return ENVIRONMENTS[name]
    except KeyError:
        known = ", ".join(sorted(ENVIRONMENTS))
        raise ValueError(f"unknown environment {name!r}; pass -c env=<{known}>") from None

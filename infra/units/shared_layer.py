"""The one shared layer (built by scripts/build_layer.py) and the common shape of every Cairn Lambda."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.assets import AssetSource
from infra.config import LAMBDA_ARCHITECTURE, EnvironmentConfig

RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.X86_64 if LAMBDA_ARCHITECTURE == "x86_64" else lambda_.Architecture.ARM_64
METRICS_NAMESPACE = "Cairn"


class SharedRuntime(Construct):
    """Owns the layer; ``function()`` builds a Lambda with the conventions every Cairn function shares."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: EnvironmentConfig, assets: AssetSource
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.assets = assets
        self.layer = lambda_.LayerVersion(
            self,
            "CoreLayer",
            code=assets.layer_code(),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="cairn core package + pinned runtime dependencies (scripts/build_layer.py)",
        )

    def function(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: str,
        handler: str,
        service: str,
        description: str,
        environment: dict[str, str],
        memory_mb: int = 512,
        timeout: Duration | None = None,
        snap_start: bool = False,
    ) -> lambda_.Function:
        log_group = logs.LogGroup(
            scope,
            f"{construct_id}Logs",
            retention=self.config.log_retention,
            removal_policy=self.config.removal_policy,
        )
        env = {
            "CAIRN_MODE": "aws",
            "CAIRN_ENV": self.config.name,
            "CAIRN_METRICS": "emf",  # business metrics as EMF (cairn.adapters.aws.powertools)
            "POWERTOOLS_SERVICE_NAME": service,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": self.config.log_level,
            "POWERTOOLS_TRACE_DISABLED": "false" if self.config.xray_sdk_tracing else "true",
            **environment,
        }
        return lambda_.Function(
            scope,
            construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            code=self.assets.function_code(code_dir),
            handler=handler,
            layers=[self.layer],
            description=description,
            memory_size=memory_mb,
            timeout=timeout or Duration.seconds(30),
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            environment=env,
            # a snapshot of each published version after init; a cold start restores it (see `warm`)
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
        )


def warm(function: lambda_.Function, instances: int, snap_start: bool = False) -> lambda_.IFunction:
    """`function` itself, or its alias `live` on the current version: with `instances` provisioned, or
    with SnapStart (which restores only published versions, so callers must invoke the alias)."""
    if instances <= 0 and not snap_start:
        return function
    if instances > 0 and snap_start:
        raise ValueError("SnapStart and provisioned concurrency cannot be combined on one function")
    return lambda_.Alias(
        function,
        "Live",
        alias_name="live",
        version=function.current_version,
        provisioned_concurrent_executions=instances or None,
    )

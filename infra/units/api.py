"""REST API: API Gateway -> the API Lambda (REST, hooks) and the MCP Lambda (/mcp), both FastAPI via Mangum;
the authorizer on every route but health."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.auth import Auth
from infra.units.reindex import REINDEX_PREFIX, REINDEX_RUN_KEY
from infra.units.search import Search
from infra.units.shared_layer import SharedRuntime, warm
from infra.units.storage import STAGE_OUTPUTS, TRANSCRIPT_PREFIX, Storage

HEALTH_PATH = ("v1", "health")
MCP_PATH = "mcp"
UI_PATH = "ui"


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvironmentConfig,
        runtime: SharedRuntime,
        storage: Storage,
        search: Search,
        auth: Auth,
        state_machine_arn: str,
    ) -> None:
        super().__init__(scope, construct_id)
        environment = {
            "CAIRN_TABLE_NAME": storage.table.table_name,
            "CAIRN_BUCKET": storage.bucket.bucket_name,
            **search.client_environment,
        }
        # what the API writes or presigns is encrypted with the stack's key, as the bucket default is
        writer_environment = {"CAIRN_KMS_KEY_ID": storage.key.key_arn}
        # signs the web UI's session cookies; every API container must share it, so it lives in
        # Secrets Manager (generated at deploy, never in the template) and is read at start-up
        self.ui_secret = secretsmanager.Secret(
            self,
            "UiSessionSecret",
            description="Signs Cairn web UI session cookies",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=48, exclude_punctuation=True
            ),
            removal_policy=config.removal_policy,
        )
        # whole-team export and import, staged in S3 (`services/transfers.py`): the API starts it with an
        # async invoke and answers at once; this worker has minutes, not the API's 29 s, and no 6 MB cap
        self.transfer_function = runtime.function(
            self,
            "TransferFunction",
            code_dir="transfer",
            handler="handler.handler",
            service="cairn-transfer",
            description="Cairn whole-team export/import worker (staged in S3)",
            memory_mb=max(config.api_memory_mb, 2048),
            timeout=Duration.minutes(15),
            environment={**environment, **writer_environment},
        )
        storage.table.grant_read_write_data(self.transfer_function)
        storage.grant_transfer_files(self.transfer_function)
        search.grant_http(self.transfer_function.role)  # type: ignore[arg-type]

        self.function = runtime.function(
            self,
            "Function",
            code_dir="api",
            handler="handler.handler",
            service="cairn-api",
            description="Cairn REST API and hook routes (FastAPI via Mangum)",
            memory_mb=config.api_memory_mb,
            timeout=Duration.seconds(29),  # API Gateway's integration limit
            snap_start=config.snap_start,
            environment={
                **environment,
                **writer_environment,
                "CAIRN_STATE_MACHINE_ARN": state_machine_arn,
                "CAIRN_UI_SECRET_ARN": self.ui_secret.secret_arn,
                "CAIRN_TRANSFER_FUNCTION": self.transfer_function.function_name,
            },
        )
        self.transfer_function.grant_invoke(self.function)
        self.ui_secret.grant_read(self.function)
        storage.table.grant_read_write_data(self.function)
        # Presigned uploads are signed with this role: s3:PutObject (+ the key) under teams/.
        storage.grant_blob_put(self.function, f"{TRANSCRIPT_PREFIX}*")
        # the transcript lines a memory cites (REST and the web UI): a session's parts, listed and read
        storage.grant_transcript_read(self.function)
        # a forced reprocess deletes the session's stage outputs so no stage skips its work
        storage.grant_blob_delete(self.function, STAGE_OUTPUTS)
        # an admin's redaction (POST /v1/admin/redact) rewrites the team's objects and purges their
        # earlier versions: it reads (grant_transcript_read: all of teams/*) and writes (PutObject above)
        storage.grant_blob_redact(self.function)
        search.grant_http(self.function.role)  # type: ignore[arg-type]
        # the UI's reindex page: the reindex run's record and a listing of its done markers, nothing else
        # under reindex/ (cairn.services.distributed_reindex.RUN_KEY and its `<model>/done/` prefixes)
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[storage.bucket.arn_for_objects(REINDEX_RUN_KEY)]
            )
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[storage.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{REINDEX_PREFIX}*/done/"]}},
            )
        )

        # MCP in its own function: hooks' cold starts skip the MCP SDK, and agents' tool traffic
        # scales (and is throttled, and alarms) apart from the hooks
        self.mcp_function = runtime.function(
            self,
            "McpFunction",
            code_dir="mcp",
            handler="handler.handler",
            service="cairn-mcp",
            description="Cairn MCP endpoint (Streamable HTTP, stateless)",
            memory_mb=config.api_memory_mb,
            timeout=Duration.seconds(29),
            environment={
                **environment,
                # API Gateway already fixes which hosts reach the function; MCP's DNS-rebinding guard
                # would otherwise refuse the execute-api and custom-domain hosts with a 421
                "CAIRN_ALLOWED_HOSTS": '["*"]',
            },
        )
        storage.table.grant_read_write_data(self.mcp_function)
        storage.grant_transcript_read(self.mcp_function)  # the `transcript` tool
        search.grant_http(self.mcp_function.role)  # type: ignore[arg-type]

        self.access_logs = logs.LogGroup(
            self, "AccessLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=config.resource_prefix,
            description=f"Cairn {config.name} API",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=False,
            api_key_source_type=apigw.ApiKeySourceType.AUTHORIZER,
            deploy_options=apigw.StageOptions(
                stage_name=config.name,
                tracing_enabled=True,
                metrics_enabled=True,
                throttling_rate_limit=config.throttle_rate_limit,
                throttling_burst_limit=config.throttle_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
            ),
        )
        # with provisioned concurrency, API Gateway invokes the warm alias, not the unpublished function
        self.target = warm(self.function, config.api_provisioned_concurrency, config.snap_start)
        self.mcp_target = warm(self.mcp_function, config.mcp_provisioned_concurrency)
        integration = apigw.LambdaIntegration(self.target)
        authorized = apigw.MethodOptions(
            authorizer=auth.authorizer,
            authorization_type=apigw.AuthorizationType.CUSTOM,
            api_key_required=config.require_usage_plan_key,
        )
        root = self.rest_api.root
        # The web UI (GET / redirects to /ui/) signs in with its own cookie, which the app checks on every
        # request (key id + HMAC, key re-checked as active); a browser sends no Authorization header for the
        # authorizer to read, so these routes skip it.
        public = apigw.MethodOptions(authorization_type=apigw.AuthorizationType.NONE)
        ui = root.add_resource(UI_PATH)
        self.ui_methods = [
            root.add_method("GET", integration, authorization_type=apigw.AuthorizationType.NONE),
            ui.add_method("ANY", integration, authorization_type=apigw.AuthorizationType.NONE),
            ui.add_proxy(
                default_integration=integration, default_method_options=public, any_method=True
            ).any_method,
        ]
        self.methods = [
            root.add_method(
                "ANY",
                integration,
                authorizer=auth.authorizer,
                authorization_type=apigw.AuthorizationType.CUSTOM,
                api_key_required=config.require_usage_plan_key,
            ),
            root.add_proxy(
                default_integration=integration, default_method_options=authorized, any_method=True
            ).any_method,
        ]
        self.methods.append(
            root.add_resource(MCP_PATH).add_method(
                "ANY",
                apigw.LambdaIntegration(self.mcp_target),
                authorizer=auth.authorizer,
                authorization_type=apigw.AuthorizationType.CUSTOM,
                api_key_required=config.require_usage_plan_key,
            )
        )
        health = root.add_resource(HEALTH_PATH[0]).add_resource(HEALTH_PATH[1])
        self.health_method = health.add_method(
            "GET", integration, authorization_type=apigw.AuthorizationType.NONE
        )

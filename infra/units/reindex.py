"""The model-change reindex on AWS's distributed engine: a Step Functions Distributed Map of Lambda workers.

Plan (one Lambda) begins the build of the configured model's OpenSearch index beside the served one and
writes the teams' memory ids to the bucket in pages, with a manifest `reindex/manifest.json` listing them
(`cairn.services.distributed_reindex`). The Distributed Map reads the manifest (ItemReader, s3:getObject)
and runs one child workflow per page, `workers` at a time (the execution's input, default
DEFAULT_WORKERS): each embeds its page with the new model into the build. Finish refuses while any page
is not done and otherwise swaps the alias. A failed run resumes: started again (or redriven), plan finds
the build and its pages, and pages recorded done are skipped.

Input: ``{"workers": 4}`` (optional). Only one run at a time makes sense; `cairn reindex` starts it.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.search import Search
from infra.units.shared_layer import SharedRuntime
from infra.units.storage import Storage

REINDEX_PREFIX = "reindex/"
MANIFEST_KEY = f"{REINDEX_PREFIX}manifest.json"  # cairn.services.distributed_reindex.MANIFEST_KEY
REINDEX_RUN_KEY = f"{REINDEX_PREFIX}run.json"  # cairn.services.distributed_reindex.RUN_KEY
DEFAULT_WORKERS = 8
#: (task, handler, timeout): a page is PAGE_SIZE (500) memories, embedded in well under a minute
TASKS = (
    ("plan", "handler.plan", Duration.minutes(15)),
    ("embed_page", "handler.embed_page", Duration.minutes(5)),
    ("finish", "handler.finish", Duration.minutes(15)),
)


class Reindex(Construct):
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
        self.functions = {}
        for name, handler, timeout in TASKS:
            fn = runtime.function(
                self,
                f"{name.title().replace('_', '')}Function",
                code_dir="reindex",
                handler=handler,
                service="cairn-reindex",
                description=f"Cairn model-change reindex: {name}",
                memory_mb=config.stage_memory_mb,
                timeout=timeout,
                environment={
                    "CAIRN_TABLE_NAME": storage.table.table_name,
                    "CAIRN_BUCKET": storage.bucket.bucket_name,
                    "CAIRN_KMS_KEY_ID": storage.key.key_arn,
                    **search.client_environment,
                },
            )
            storage.table.grant_read_data(fn)  # the teams and their memories
            if name == "finish":  # stamps each record's `embedding_version` after the swap, nothing else
                storage.table.grant(fn, "dynamodb:UpdateItem")
            search.grant_http(fn.role)  # type: ignore[arg-type]  # the build index, its alias, the swap
            self.grant_run_files(storage, fn)
            self.functions[name] = fn

        defaults = sfn.Pass(
            self,
            "Defaults",
            parameters={
                "args": sfn.JsonPath.json_merge(
                    sfn.JsonPath.string_to_json(f'{{"workers": {DEFAULT_WORKERS}}}'),
                    sfn.JsonPath.entire_payload,
                )
            },
        )
        plan = self._task("plan", result_path="$.plan")
        embed = self._task(
            "embed_page",
            result_path=sfn.JsonPath.DISCARD,
            payload=sfn.TaskInput.from_object(
                {"page": sfn.JsonPath.string_at("$.page"), "version": sfn.JsonPath.string_at("$.version")}
            ),
        )
        pages = sfn.DistributedMap(
            self,
            "EmbedPages",
            item_reader=sfn.S3JsonItemReader(bucket=storage.bucket, key=MANIFEST_KEY),
            max_concurrency_path="$.args.workers",
            result_path=sfn.JsonPath.DISCARD,
            # no tolerated failures (the default): one page failed fails the run, and finish never swaps
        )
        pages.item_processor(embed)
        finish = self._task("finish", result_path="$.finish")
        self.logs = logs.LogGroup(
            self, "StateMachineLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=f"{config.resource_prefix}-reindex",
            state_machine_type=sfn.StateMachineType.STANDARD,
            query_language=sfn.QueryLanguage.JSON_PATH,
            definition_body=sfn.DefinitionBody.from_chainable(defaults.next(plan).next(pages).next(finish)),
            timeout=Duration.hours(12),
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=self.logs, level=sfn.LogLevel.ALL, include_execution_data=False),
            removal_policy=config.removal_policy,
        )
        # the ItemReader reads the manifest under the stack's key (CDK grants the GetObject)
        storage.key.grant(self.state_machine, "kms:Decrypt")

    @staticmethod
    def grant_run_files(storage: Storage, grantee: iam.IGrantable) -> None:
        """Read, write, list and delete under `reindex/` only (pages, done markers, the run's record)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[storage.bucket.arn_for_objects(f"{REINDEX_PREFIX}*")],
            )
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[storage.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{REINDEX_PREFIX}*"]}},
            )
        )
        storage.key.grant(grantee, "kms:Decrypt", "kms:GenerateDataKey")

    def _task(
        self, name: str, *, result_path: str, payload: sfn.TaskInput | None = None
    ) -> tasks.LambdaInvoke:
        task = tasks.LambdaInvoke(
            self,
            name.title().replace("_", ""),
            lambda_function=self.functions[name],
            payload=payload,
            payload_response_only=True,
            result_path=result_path,
            retry_on_service_exceptions=True,
        )
        task.add_retry(
            errors=["States.TaskFailed", "States.Timeout"],
            interval=Duration.seconds(2),
            backoff_rate=2.0,
            max_attempts=3,
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

"""The learning pipeline: S3 upload -> EventBridge -> Step Functions (standard, JSONPath) -> stage Lambdas.

State contract for the stage handlers (``functions/pipeline/handler.py:<stage>``): every stage receives the
whole state and returns a small JSON object (object keys, counts, never transcript data: payloads are capped
at 256 KB) that is stored under the stage's own name::

    {"source": {"bucket", "key", "size", "etag", "event_id", "event_time", "run"},
     "parse": {...}, "chunk": {"chunks": [...], ...}, "extract": [{...} per chunk], "consolidate": {...},
     "reflect": {...}}

``extract`` runs once per element of ``$.chunk.chunks`` and receives ``{"source", "parse", "chunk", "index"}``
where ``chunk`` is that element. Failures are retried with backoff, then caught: the state (with ``$.error``)
marks the session failed (``handler.fail``), is sent to the encrypted dead-letter queue, and the execution
fails. One run at a time learns a session (``run`` is the execution's name): when another run holds it,
parse answers ``{"learned_by": ...}`` and the execution succeeds there (the holder learns the part); when
parts were recorded during the run, reflect answers ``"again": true`` and the execution learns again from
parse. After reflect, ``dream`` runs the project's dream pass (caught: the session stays learned); the
same function, started every ``DREAM_EVERY`` by an EventBridge schedule through a one-task state machine
with no ``source``, runs the scheduled pass over every project. ``consolidate`` searches the index for
near-duplicates, so the stages get the OpenSearch endpoint and consolidate alone may query it.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.config import EnvironmentConfig
from infra.units.bedrock import extractor_environment, grant_invoke_model
from infra.units.search import Search
from infra.units.shared_layer import SharedRuntime
from infra.units.storage import TRANSCRIPT_PREFIX, TRANSCRIPT_SUFFIX, Storage


@dataclass(frozen=True)
class Stage:
    name: str
    writes_blobs: bool  # writes its stage outputs (events, chunks, extraction, consolidation, reflection)
    timeout: Duration
    searches_index: bool = False  # queries OpenSearch (near-duplicate search)


STAGES = (
    Stage("parse", writes_blobs=True, timeout=Duration.minutes(5)),
    Stage("chunk", writes_blobs=True, timeout=Duration.minutes(5)),
    Stage("extract", writes_blobs=True, timeout=Duration.minutes(10)),
    Stage("consolidate", writes_blobs=True, timeout=Duration.minutes(10), searches_index=True),
    Stage("reflect", writes_blobs=True, timeout=Duration.minutes(5)),
    # the project's dream pass after each session, and the scheduled one (its own state machine)
    Stage("dream", writes_blobs=True, timeout=Duration.minutes(10)),
)
#: The Catch path's first step: marks the session failed so `cairn sessions` does not show it processing.
FAIL_STAGE = Stage("fail", writes_blobs=False, timeout=Duration.minutes(1))

#: How often sessions granted an upload that never came are looked for (the sweep reads those updated in the
#: last day, `cairn.services.uploads.SWEEP_HORIZON`, so each gets ~96 looks).
SWEEP_EVERY = Duration.minutes(15)

#: How often the scheduled dream pass looks at every project with memories written since its last pass.
DREAM_EVERY = Duration.hours(6)

#: Task errors retried with exponential backoff (Lambda service errors are retried by CDK's default retrier).
RETRY_ERRORS = ["States.TaskFailed", "States.Timeout"]


class Pipeline(Construct):
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

        self.functions = {}
        for stage in (*STAGES, FAIL_STAGE):
            fn = runtime.function(
                self,
                f"{stage.name.capitalize()}Function",
                code_dir="pipeline",
                handler=f"handler.{stage.name}",
                service="cairn-pipeline",
                description=f"Cairn learning pipeline: {stage.name}",
                memory_mb=config.stage_memory_mb,
                timeout=stage.timeout,
                environment={
                    "CAIRN_TABLE_NAME": storage.table.table_name,
                    "CAIRN_BUCKET": storage.bucket.bucket_name,
                    "CAIRN_KMS_KEY_ID": storage.key.key_arn,  # stage outputs under the stack's key
                    **search.client_environment,
                    **(extractor_environment(config) if stage.name == "extract" else {}),
                },
            )
            if stage.name == "extract":
                grant_invoke_model(fn, config)  # only when the environment turns LLM extraction on
            if stage.searches_index:
                search.grant_search(fn.role)  # type: ignore[arg-type]
            storage.table.grant_read_write_data(fn)
            storage.grant_blob_read(fn)
            if stage.writes_blobs:
                storage.grant_blob_put(fn)
            self.functions[stage.name] = fn

        failed = sfn.Fail(self, "PipelineFailed", error="PipelineFailed", cause="see the dead-letter queue")
        notify = tasks.SqsSendMessage(
            self,
            "SendToDeadLetter",
            queue=self.dead_letter,
            message_body=sfn.TaskInput.from_object(
                {
                    "execution": sfn.JsonPath.string_at("$$.Execution.Id"),
                    "source": sfn.JsonPath.object_at("$.source"),
                    "error": sfn.JsonPath.object_at("$.error"),
                }
            ),
            result_path=sfn.JsonPath.DISCARD,
        ).next(failed)
        # mark the session failed, then dead-letter; if marking itself fails, still dead-letter
        notify = (
            self._task("fail", result_path=sfn.JsonPath.DISCARD)
            .add_catch(notify, errors=["States.ALL"], result_path="$.fail_error")
            .next(notify)
        )

        source = sfn.Pass(
            self,
            "Source",
            parameters={
                "source": {
                    "bucket": sfn.JsonPath.string_at("$.detail.bucket.name"),
                    "key": sfn.JsonPath.string_at("$.detail.object.key"),
                    "size": sfn.JsonPath.number_at("$.detail.object.size"),
                    "etag": sfn.JsonPath.string_at("$.detail.object.etag"),
                    "event_id": sfn.JsonPath.string_at("$.id"),
                    "event_time": sfn.JsonPath.string_at("$.time"),
                    "run": sfn.JsonPath.string_at("$$.Execution.Name"),  # the run holding the session
                }
            },
        )
        parse = self._task("parse").add_catch(notify, errors=["States.ALL"], result_path="$.error")
        chunk = self._task("chunk").add_catch(notify, errors=["States.ALL"], result_path="$.error")

        extract_one = self._task("extract", result_path="$").add_catch(
            sfn.Fail(self, "ExtractChunkFailed", error="ExtractFailed", cause="extract failed after retries"),
            errors=["States.ALL"],
            result_path="$.error",
        )
        extract = sfn.Map(
            self,
            "ExtractChunks",
            items_path="$.chunk.chunks",
            item_selector={
                "source": sfn.JsonPath.object_at("$.source"),
                "parse": sfn.JsonPath.object_at("$.parse"),
                "chunk": sfn.JsonPath.object_at("$$.Map.Item.Value"),
                "index": sfn.JsonPath.number_at("$$.Map.Item.Index"),
            },
            max_concurrency=config.extract_max_concurrency,
            result_path="$.extract",
        )
        extract.item_processor(extract_one)
        extract.add_catch(notify, errors=["States.ALL"], result_path="$.error")
        consolidate = self._task("consolidate").add_catch(
            notify, errors=["States.ALL"], result_path="$.error"
        )
        reflect = self._task("reflect").add_catch(notify, errors=["States.ALL"], result_path="$.error")

        # one run at a time per session (cairn.pipeline.stages.status): a run that finds the session held
        # ends here, and the holder learns again when parts were recorded while it ran
        held = sfn.Choice(self, "HeldByAnotherRun").when(
            sfn.Condition.is_present("$.parse.learned_by"), sfn.Succeed(self, "LeftToThatRun")
        )
        parts_arrived = (
            sfn.Choice(self, "PartsArrived")
            .when(sfn.Condition.boolean_equals("$.reflect.again", True), parse)
            .otherwise(sfn.Succeed(self, "Learned"))
        )
        # the session is learned once reflect settled it: a dream pass that fails still leaves it learned
        # (the scheduled pass does the work, its watermark not moved)
        dream = self._task("dream").add_catch(
            parts_arrived, errors=["States.ALL"], result_path="$.dream_error"
        )
        definition = (
            source.next(parse)
            .next(held.otherwise(chunk).afterwards())
            .next(extract)
            .next(consolidate)
            .next(reflect)
            .next(dream)
            .next(parts_arrived)
        )
        self.logs = logs.LogGroup(
            self, "StateMachineLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=f"{config.resource_prefix}-learning",
            state_machine_type=sfn.StateMachineType.STANDARD,
            query_language=sfn.QueryLanguage.JSON_PATH,
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            timeout=Duration.hours(2),
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=self.logs, level=sfn.LogLevel.ALL, include_execution_data=False),
            removal_policy=config.removal_policy,
        )

        self.rule = events.Rule(
            self,
            "TranscriptUploaded",
            description="Start the learning pipeline for each uploaded transcript",
            event_pattern=events.EventPattern(
                source=["aws.s3"],
                detail_type=["Object Created"],
                detail={
                    "bucket": {"name": [storage.bucket.bucket_name]},
                    "object": {"key": events.Match.wildcard(f"{TRANSCRIPT_PREFIX}*{TRANSCRIPT_SUFFIX}")},
                },
            ),
            targets=[
                targets.SfnStateMachine(
                    self.state_machine,
                    dead_letter_queue=self.dead_letter,
                    retry_attempts=20,
                    max_event_age=Duration.hours(24),
                )
            ],
        )

        # a session granted an upload that never came would stay `received` forever: every 15 minutes a
        # sweep fails those whose upload URL has expired, with the reason (cairn.services.uploads)
        self.sweeper = runtime.function(
            self,
            "SweepFunction",
            code_dir="sweeper",
            handler="handler.handler",
            service="cairn-sweeper",
            description="Cairn: fail sessions granted an upload that never came",
            timeout=Duration.minutes(5),
            environment={
                "CAIRN_TABLE_NAME": storage.table.table_name,
                "CAIRN_BUCKET": storage.bucket.bucket_name,
            },
        )
        storage.table.grant_read_write_data(self.sweeper)
        storage.grant_blob_list(self.sweeper)  # a part stored but not yet recorded is not "never sent"
        self.sweep_rule = events.Rule(
            self,
            "SweepUnsentUploads",
            description="Fail sessions granted an upload that never came",
            schedule=events.Schedule.rate(SWEEP_EVERY),
            targets=[targets.LambdaFunction(self.sweeper, retry_attempts=2, max_event_age=SWEEP_EVERY)],
        )
        self._scheduled_dream(config)

    def _scheduled_dream(self, config: EnvironmentConfig) -> None:
        """EventBridge schedule -> a one-task state machine -> the dream function with no source: every
        project with memories written since its last pass (cairn.pipeline.stages.dream.dream_all)."""
        task = self._task("dream", construct_id="ScheduledDream")
        self.dream_logs = logs.LogGroup(
            self, "DreamLogs", retention=config.log_retention, removal_policy=config.removal_policy
        )
        self.dream_machine = sfn.StateMachine(
            self,
            "DreamMachine",
            state_machine_name=f"{config.resource_prefix}-dream",
            state_machine_type=sfn.StateMachineType.STANDARD,
            query_language=sfn.QueryLanguage.JSON_PATH,
            definition_body=sfn.DefinitionBody.from_chainable(task),
            timeout=Duration.hours(1),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=self.dream_logs, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
            removal_policy=config.removal_policy,
        )
        self.dream_rule = events.Rule(
            self,
            "DreamSchedule",
            description="Consolidate every project with new memories across its sessions (the dream pass)",
            schedule=events.Schedule.rate(DREAM_EVERY),
            targets=[
                targets.SfnStateMachine(
                    self.dream_machine,
                    input=events.RuleTargetInput.from_object({"scheduled": True}),
                    dead_letter_queue=self.dead_letter,
                    retry_attempts=2,
                    max_event_age=DREAM_EVERY,
                )
            ],
        )

    def _task(
        self, stage: str, *, result_path: str | None = None, construct_id: str | None = None
    ) -> tasks.LambdaInvoke:
        task = tasks.LambdaInvoke(
            self,
            construct_id or stage.capitalize(),
            lambda_function=self.functions[stage],
            payload_response_only=True,
            result_path=result_path or f"$.{stage}",
            retry_on_service_exceptions=True,
        )
        task.add_retry(
            errors=RETRY_ERRORS,
            interval=Duration.seconds(2),
            backoff_rate=2.0,
            max_attempts=3,
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

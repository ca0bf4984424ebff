"""Learning-pipeline stage Lambdas for Step Functions: one thin handler per stage over
`cairn.pipeline.running.state_machine`.

Each receives the execution state and returns its stage's small result (object keys and counts). The
container is built once per cold start and reused by warm invocations.
"""

import os

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-pipeline")

import warnings  # noqa: E402

from aws_lambda_powertools import Metrics, Tracer  # noqa: E402 - needs the defaults above
from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_container  # noqa: E402
from cairn.pipeline.running import state_machine as sfn  # noqa: E402

# cairn's own loggers log through the structured logger; the business metrics the stages count
# (memories written, sessions learned) are flushed as EMF at the end of each invocation
logger, tracer, metrics = structured_logger(), Tracer(), Metrics()
warnings.filterwarnings("ignore", "No application metrics to publish")
container = build_container()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def parse(event: dict, context: object) -> dict:
    return sfn.parse_stage(container.pipeline, container.uploads, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def chunk(event: dict, context: object) -> dict:
    return sfn.chunk_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def extract(event: dict, context: object) -> dict:
    return sfn.extract_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def consolidate(event: dict, context: object) -> dict:
    return sfn.consolidate_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def reflect(event: dict, context: object) -> dict:
    return sfn.reflect_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def fail(event: dict, context: object) -> dict:
    return sfn.fail_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def dream(event: dict, context: object) -> dict:
    """After reflect: the session's project; from the schedule (no source): every project with news."""
    return sfn.dream_stage(container.pipeline, container.teams, event)

"""Learning-pipeline stage Lambdas for Step Functions: one thin handler per stage over
`cairn.pipeline.running.state_machine`.

Each receives the execution state and returns its stage's small result (object keys and counts). The
container is built once per cold start and reused by warm invocations.
"""

import os

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-pipeline")

from aws_lambda_powertools import Logger, Tracer  # noqa: E402 - needs the defaults above
from cairn.bootstrap import build_container  # noqa: E402
from cairn.pipeline.running import state_machine as sfn  # noqa: E402

logger, tracer = Logger(), Tracer()
container = build_container()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def parse(event: dict, context: object) -> dict:
    return sfn.parse_stage(container.pipeline, container.uploads, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def chunk(event: dict, context: object) -> dict:
    return sfn.chunk_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def extract(event: dict, context: object) -> dict:
    return sfn.extract_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def consolidate(event: dict, context: object) -> dict:
    return sfn.consolidate_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def reflect(event: dict, context: object) -> dict:
    return sfn.reflect_stage(container.pipeline, event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def fail(event: dict, context: object) -> dict:
    return sfn.fail_stage(container.pipeline, event)

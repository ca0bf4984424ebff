"""Reindex state machine entries (infra/units/reindex.py): plan, embed one page of the manifest, finish."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-reindex")

from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_distributed_reindex  # noqa: E402

logger = structured_logger()  # cairn's own loggers log through it
reindex = build_distributed_reindex()


@logger.inject_lambda_context
def plan(event: dict, context: object) -> dict:
    return reindex.plan()


@logger.inject_lambda_context
def embed_page(event: dict, context: object) -> dict:
    return reindex.embed_page(event["page"], event["version"])


@logger.inject_lambda_context
def finish(event: dict, context: object) -> dict:
    return reindex.finish()

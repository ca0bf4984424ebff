"""REQUEST authorizer entry: hashed API key -> IAM policy with the caller's team (cached by API Gateway)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-authorizer")

from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_key_service  # noqa: E402
from cairn.services.authorizer import authorize  # noqa: E402

logger = structured_logger()  # cairn's own loggers log through it
keys = build_key_service()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    return authorize(event, keys)

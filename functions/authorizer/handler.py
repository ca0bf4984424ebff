"""REQUEST authorizer entry: hashed API key -> IAM policy with the caller's team (cached by API Gateway)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-authorizer")

from aws_lambda_powertools import Logger  # noqa: E402
from cairn.bootstrap import build_key_service  # noqa: E402
from cairn.services.authorizer import authorize  # noqa: E402

logger = Logger()
keys = build_key_service()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    return authorize(event, keys)

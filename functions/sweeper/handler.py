"""Scheduled sweep entry: sessions granted an upload that never came are failed with the reason, instead of
staying `received` forever (EventBridge schedule, see infra/units/pipeline.py)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-sweeper")

from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_upload_sweep  # noqa: E402

logger = structured_logger()  # cairn's own loggers log through it
sweep = build_upload_sweep()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    expired = sweep()
    logger.info("failed %d session(s) whose upload never came", expired)
    return {"expired": expired}

"""Transfer worker entry: a whole team's export or import, staged in S3 (invoked async by the API)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-transfer")

from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_container  # noqa: E402

logger = structured_logger()  # cairn's own loggers log through it
container = build_container()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    done = container.transfers.run(event["team_id"], event["transfer_id"])
    logger.info("transfer %s %s: %s %s", done.id, done.kind, done.state, done.error or "")
    return {"transfer_id": done.id, "state": done.state, "records": done.records, "error": done.error}

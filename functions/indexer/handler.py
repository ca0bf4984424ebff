"""Indexer entry: DynamoDB stream batches -> embeddings -> OpenSearch (a failure retries the batch)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-indexer")

from cairn.adapters.aws.powertools import structured_logger  # noqa: E402
from cairn.bootstrap import build_stream_indexer  # noqa: E402

logger = structured_logger()  # cairn's own loggers log through it
indexer = build_stream_indexer()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    return indexer.apply(event.get("Records", []))

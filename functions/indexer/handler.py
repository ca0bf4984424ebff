"""Indexer entry: DynamoDB stream batches -> embeddings -> OpenSearch (a failure retries the batch)."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-indexer")

from aws_lambda_powertools import Logger  # noqa: E402
from cairn.bootstrap import build_stream_indexer  # noqa: E402

logger = Logger()
indexer = build_stream_indexer()


@logger.inject_lambda_context
def handler(event: dict, context: object) -> dict:
    return indexer.apply(event.get("Records", []))

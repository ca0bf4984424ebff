"""MCP Lambda entry: the app's /mcp endpoint (Streamable HTTP, stateless) behind API Gateway, through Mangum.

The container and app are built at import, once per cold start, and reused by warm invocations;
the app carries only /mcp (the REST and hook routes are functions/api).
"""

import os
import warnings

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-mcp")

from aws_lambda_powertools import Logger, Metrics, Tracer  # noqa: E402 - needs the defaults above
from cairn.api.app import create_app  # noqa: E402
from cairn.bootstrap import build_container  # noqa: E402
from mangum import Mangum  # noqa: E402

# most requests publish no custom metric; Powertools' documented way to silence its warning
warnings.filterwarnings("ignore", "No application metrics to publish")
logger, tracer, metrics = Logger(), Tracer(), Metrics()
app = create_app(build_container(), rest=False)
asgi = Mangum(app, lifespan="off")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: object) -> dict:
    return asgi(event, context)

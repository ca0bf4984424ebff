"""API Lambda entry: the REST and hook routes of the FastAPI app behind API Gateway, through Mangum.

The container and app are built at import, once per cold start, and reused by warm invocations;
/mcp has its own function (functions/mcp), so this one never imports the MCP SDK.
"""

import os
import warnings

os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "cairn-api")

from aws_lambda_powertools import Logger, Metrics, Tracer  # noqa: E402 - needs the defaults above
from cairn.api.app import create_app  # noqa: E402
from cairn.bootstrap import build_container  # noqa: E402
from mangum import Mangum  # noqa: E402

# most requests publish no custom metric; Powertools' documented way to silence its warning
warnings.filterwarnings("ignore", "No application metrics to publish")
logger, tracer, metrics = Logger(), Tracer(), Metrics()
app = create_app(build_container(), mcp=False)
asgi = Mangum(app, lifespan="off")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: object) -> dict:
    return asgi(event, context)

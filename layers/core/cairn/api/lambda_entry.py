"""The API Gateway -> Lambda edge shared by the API and MCP functions: Powertools around Mangum.

`asgi_handler` builds the container and the app once per cold start (module import in `functions/`),
with only the surface that function serves, and returns the decorated handler warm invocations reuse.
X-Ray subsegments (Powertools Tracer) only where the environment turns them on: importing the X-Ray SDK
creates its own botocore client and costs ~0.25 s of every cold start, and with Lambda's active tracing
each invocation is traced without it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI


def asgi_handler(service: str, *, rest: bool, mcp: bool) -> tuple[FastAPI, Callable[[dict, Any], dict]]:
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", service)
    # imported after the defaults above: Powertools reads them when its objects are created
    from aws_lambda_powertools import Metrics
    from mangum import Mangum

    from cairn.adapters.aws.powertools import structured_logger
    from cairn.api.app import create_app
    from cairn.bootstrap import build_container, prime_at_init

    # most requests publish no custom metric; Powertools' documented way to silence its warning
    warnings.filterwarnings("ignore", "No application metrics to publish")
    # the business metrics the services count (cairn.adapters.aws.powertools) go out with this flush
    logger, metrics = structured_logger(), Metrics()
    container = build_container()
    app = create_app(container, rest=rest, mcp=mcp)
    asgi = Mangum(app, lifespan="off")
    prime_at_init(container)  # SnapStart / provisioned init only: the model then ships in the snapshot

    @logger.inject_lambda_context
    @metrics.log_metrics(capture_cold_start_metric=True)
    def handler(event: dict, context: Any) -> dict:
        return asgi(event, context)

    if os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").lower() in ("1", "true"):
        return app, handler
    from aws_lambda_powertools import Tracer

    return app, Tracer().capture_lambda_handler(handler)

"""Lambda's structured logs and metrics through AWS Lambda Powertools.

`PowertoolsMetrics` is the `Metrics` port as Powertools Metrics: counts accumulate in the process's one
metric set, and the handler's `Metrics().log_metrics` decorator writes them as one EMF log line at the end
of the invocation (CloudWatch turns it into metrics in the `Cairn` namespace, dimension `service`).
`structured_logger` is each Lambda's Powertools Logger with Cairn's own loggers (`logging.getLogger(
"cairn...")`) writing through it, so a warning from a service is one JSON line with the request's
Lambda context, not a bare text line beside the structured ones.
"""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger
from aws_lambda_powertools import Metrics as PowertoolsMetricSet
from aws_lambda_powertools.metrics import MetricUnit

CAIRN_LOGGER = "cairn"


class PowertoolsMetrics:
    """Counts with the dimensions `service` (the function, from POWERTOOLS_SERVICE_NAME) and `environment`
    (dev, staging, prod: several stacks may share an account and region, and their alarms must not)."""

    def __init__(self, environment: str, metric_set: PowertoolsMetricSet | None = None) -> None:
        self._metrics = metric_set or PowertoolsMetricSet()
        self._metrics.set_default_dimensions(environment=environment)

    def count(self, name: str, value: int = 1) -> None:
        self._metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def structured_logger() -> Logger:
    """The function's Powertools Logger (service and level from POWERTOOLS_* variables), and Cairn's
    loggers routed into it: they share its JSON handler and stop propagating to the runtime's root
    handler (which would print each record a second time, as plain text)."""
    logger = Logger()
    cairn = logging.getLogger(CAIRN_LOGGER)
    for handler in list(cairn.handlers):
        cairn.removeHandler(handler)
    cairn.addHandler(logger.registered_handler)
    cairn.setLevel(logger.log_level)
    cairn.propagate = False
    return logger

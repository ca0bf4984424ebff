"""In Lambda, Cairn's own loggers write through the function's Powertools Logger: one JSON line each."""

from __future__ import annotations

import json
import logging
import uuid

import pytest
from cairn.adapters.aws.powertools import structured_logger

pytestmark = pytest.mark.unit


@pytest.fixture
def cairn_logger_restored():
    cairn = logging.getLogger("cairn")
    saved = (list(cairn.handlers), cairn.level, cairn.propagate)
    yield
    cairn.handlers[:] = saved[0]
    cairn.setLevel(saved[1])
    cairn.propagate = saved[2]


def test_a_cairn_module_logger_writes_a_structured_json_line_with_the_service(
    monkeypatch, capsys, cairn_logger_restored
):
    # a service name of its own: Powertools keeps one handler per service for the process, bound to the
    # stdout of its first use, and another test may have made "cairn-api"'s before capsys replaced stdout
    service = f"cairn-logs-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", service)
    monkeypatch.setenv("POWERTOOLS_LOG_LEVEL", "INFO")
    logger = structured_logger()
    logger.append_keys(request_id="req-1")  # what inject_lambda_context adds per invocation
    logging.getLogger("cairn.services.recall").warning("search index unavailable: %s", "timeout")
    logging.getLogger("cairn.services.recall").debug("not at INFO")

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(lines) == 1
    [record] = lines
    assert record["level"] == "WARNING"
    assert record["message"] == "search index unavailable: timeout"
    assert record["service"] == service and record["request_id"] == "req-1"
    assert logging.getLogger("cairn").propagate is False  # no second, plain-text copy via the root

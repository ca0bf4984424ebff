"""The two API Lambda entry points on API Gateway REST proxy events, cold start then warm.

`functions/mcp` serves /mcp, `functions/api` the REST and hook routes. Each handler module is imported
once (the cold start builds the container and the app) and then invoked again and again with the same
module state, as Lambda does on warm invocations; the SDK's long-lived session manager could be run
only once per instance and failed exactly here.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.typing import LambdaContext

from tests.fakes.embedders import HashEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "tests" / "events" / "apigw"
GATEWAY_HOST = "k7q2x9w4ab.execute-api.eu-west-1.amazonaws.com"


def lambda_context(request_id: str) -> LambdaContext:
    ctx = LambdaContext()
    ctx._function_name = "cairn-dev-api"
    ctx._function_version = "$LATEST"
    ctx._invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-dev-api"
    ctx._memory_limit_in_mb = 1024
    ctx._aws_request_id = request_id
    ctx._log_group_name = "/aws/lambda/cairn-dev-api"
    ctx._log_stream_name = "2026/11/22/[$LATEST]0123456789abcdef"
    return ctx


def event(name: str, key: str) -> dict[str, Any]:
    raw = (EVENTS / name).read_text().replace("${CAIRN_API_KEY}", key)
    return json.loads(raw)


def load_handler(name: str, home: Path, monkeypatch):
    monkeypatch.setenv("CAIRN_MODE", "local")
    monkeypatch.setenv("CAIRN_HOME", str(home))
    monkeypatch.setenv("CAIRN_ALLOWED_HOSTS", json.dumps([GATEWAY_HOST]))
    for var in ("POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_SERVICE_NAME"):
        monkeypatch.setenv(var, "recorded")  # so monkeypatch restores the variable the handler defaults
        monkeypatch.delenv(var)
    sys.modules.pop(f"functions.{name}.handler", None)
    module = importlib.import_module(f"functions.{name}.handler")
    assert os.environ["POWERTOOLS_METRICS_NAMESPACE"] == "Cairn"
    return module


@pytest.fixture
def handler_module(tmp_path, monkeypatch):
    module = load_handler("mcp", tmp_path / "lambda-home", monkeypatch)
    yield module
    module.app.state.container.close()
    sys.modules.pop("functions.mcp.handler", None)


@pytest.fixture
def api_module(tmp_path, monkeypatch):
    module = load_handler("api", tmp_path / "lambda-home", monkeypatch)
    yield module
    module.app.state.container.close()
    sys.modules.pop("functions.api.handler", None)


def invoke(module, ev: dict[str, Any], n: int) -> tuple[int, dict[str, Any], dict[str, Any]]:
    response = module.handler(ev, lambda_context(f"req-{n}"))
    body = json.loads(response["body"]) if response.get("body") else {}
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    return response["statusCode"], headers, body


def test_initialize_then_recall_succeed_on_consecutive_warm_invocations(handler_module):
    container = handler_module.app.state.container
    _, _, key = container.keys.create_team("acme", "ops")
    admin = container.keys.authenticate(key)
    from cairn.domain.models import MemoryKind
    from cairn.services.memories import NewMemory

    deploy = container.memories.remember(
        admin,
        NewMemory(MemoryKind.PROCEDURE, "Deploy the shop with make deploy", project="github.com/acme/shop"),
    )

    status, headers, body = invoke(handler_module, event("mcp_initialize.json", key), 1)
    assert status == 200, body
    assert body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["serverInfo"]["name"] == "cairn"
    assert "mcp-session-id" not in headers  # stateless: nothing to route back to this instance

    for n in (2, 3):  # warm, and warm again
        status, _, body = invoke(handler_module, event("mcp_tools_call_recall.json", key), n)
        assert status == 200, body
        hits = body["result"]["structuredContent"]["hits"]
        assert [h["id"] for h in hits] == [deploy.id]

    status, _, body = invoke(handler_module, event("mcp_modern_tools_call_recall.json", key), 4)
    assert status == 200, body
    assert body["id"] == 7 and body["result"]["structuredContent"]["hits"][0]["id"] == deploy.id


def test_the_gateway_refuses_a_bad_key_and_a_foreign_host(handler_module):
    status, headers, body = invoke(handler_module, event("mcp_initialize.json", "cairn_wrong"), 1)
    assert status == 401 and body["error"]["message"] == "invalid API key"
    assert headers["www-authenticate"] == "Bearer"

    foreign = event("mcp_initialize.json", "cairn_wrong")
    foreign["headers"]["Host"] = foreign["multiValueHeaders"]["Host"][0] = "evil.example"
    status, _, body = invoke(handler_module, foreign, 2)
    assert status == 421 and "CAIRN_ALLOWED_HOSTS" in body["error"]["message"]


def test_the_api_function_serves_the_session_start_hook_but_not_mcp(api_module):
    container = api_module.app.state.container
    _, _, key = container.keys.create_team("acme", "ops")
    status, _, body = invoke(api_module, event("hook_context_get.json", key), 1)
    assert status == 200, body
    assert "<cairn-context>" in body["markdown"]

    status, _, body = invoke(api_module, event("mcp_initialize.json", key), 2)
    assert status == 404  # /mcp is the MCP function's route


def test_the_api_function_cold_start_never_imports_the_mcp_sdk(tmp_path):
    import subprocess

    probe = (
        "import sys, functions.api.handler; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    env = {**os.environ, "CAIRN_MODE": "local", "CAIRN_HOME": str(tmp_path / "home")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "layers" / "core"), str(REPO)])
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]"


class QueryLog(HashEmbedder):
    """Stands in for the bundled model: records each query it embeds."""

    def __init__(self) -> None:
        super().__init__("query-log")
        self.queries: list[str] = []

    def embed_query(self, text):
        self.queries.append(text)
        return super().embed_query(text)


@pytest.mark.parametrize(
    ("init_type", "primed"),
    [("snap-start", True), ("provisioned-concurrency", True), ("on-demand", False)],
)
def test_an_init_ahead_of_requests_loads_the_query_model_so_the_snapshot_holds_it(
    init_type, primed, tmp_path, monkeypatch
):
    import cairn.bootstrap

    model = QueryLog()
    monkeypatch.setattr(cairn.bootstrap, "shared_embedder", lambda: model)
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", init_type)
    module = load_handler("api", tmp_path / "lambda-home", monkeypatch)
    try:
        assert bool(model.queries) is primed
    finally:
        module.app.state.container.close()
        sys.modules.pop("functions.api.handler", None)

"""Business metrics leave the real code paths as CloudWatch EMF log lines (Powertools Metrics).

With `CAIRN_METRICS=emf` (what the stack sets on every Lambda), the services count what they did into
Powertools' metric set, and the flush a Lambda handler's `log_metrics` does writes them to stdout as EMF:
the lines captured here are exactly what CloudWatch Logs would turn into metrics.
"""

from __future__ import annotations

import json
import socket

import pytest
from aws_lambda_powertools import Metrics
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.adapters.aws.powertools import PowertoolsMetrics
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.api.app import create_app
from cairn.bootstrap import build_container, shared_embedder
from cairn.domain.models import KeyScope, MemoryFilter, Principal
from cairn.services.recall import RecallService
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def emf(monkeypatch, capsys):
    """Flushes Powertools' metric set and returns {metric name: total} from the EMF lines on stdout."""
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Cairn")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "cairn-api")
    Metrics().clear_metrics()
    capsys.readouterr()
    saved = dict(Metrics().default_dimensions)

    def flush() -> dict[str, float]:
        Metrics().flush_metrics()
        totals: dict[str, float] = {}
        for line in capsys.readouterr().out.splitlines():
            if not line.startswith("{") or '"_aws"' not in line:
                continue
            doc = json.loads(line)
            [directive] = doc["_aws"]["CloudWatchMetrics"]
            assert directive["Namespace"] == "Cairn"
            assert [sorted(d) for d in directive["Dimensions"]] == [["environment", "service"]]
            assert doc["service"] == "cairn-api" and doc["environment"] == "staging"
            for metric in directive["Metrics"]:
                assert metric["Unit"] == "Count"
                value = doc[metric["Name"]]
                totals[metric["Name"]] = totals.get(metric["Name"], 0) + sum(
                    value if isinstance(value, list) else [value]
                )
        return totals

    yield flush
    Metrics().default_dimensions.clear()
    Metrics().default_dimensions.update(saved)
    Metrics().clear_metrics()


def test_learning_a_session_emits_sessions_learned_and_memories_written(tmp_path, emf):
    container = build_container(Settings(mode="local", env="staging", home=tmp_path / "home", metrics="emf"))
    try:
        with TestClient(create_app(container)) as api:
            _, _, key = container.keys.create_team("alpha", "admin")
            headers = {"Authorization": f"Bearer {key}"}
            session = learn(
                container,
                api,
                headers,
                raw=CLAUDE_FIXTURE.read_bytes(),
                session_id="fe5e1c67-53e7-4862-81ae-d0e013e3270b",
                project="github.com/demo/todo-app",
            )
            assert session["status"] == "learned"
            created = session["stats"]["consolidate"]["created"]
            # a question about something the team never discussed: recall abstains
            answer = api.post(
                "/v1/search",
                headers=headers,
                json={"query": "what is the kubernetes helm chart of the billing service?"},
            )
            assert answer.status_code == 200 and answer.json()["hits"] == []
    finally:
        container.close()
    totals = emf()
    assert totals["SessionsLearned"] == 1
    assert totals["MemoriesWritten"] >= created > 0
    assert totals["Abstentions"] == 1
    assert "RecallDegraded" not in totals


def test_recall_over_a_down_search_engine_emits_recall_degraded(tmp_path, emf):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket is closed
    down = OpenSearchIndex(opensearch_client(f"http://127.0.0.1:{port}", auth="none", timeout=0.5), "c", 384)
    repo = SqliteMemoryRepository(SqliteDatabase(tmp_path / "c.db"))
    recall = RecallService(repo, down, shared_embedder(), metrics=PowertoolsMetrics("staging"))
    caller = Principal("team_a", "dev", "key_a", frozenset({KeyScope.READ}))
    result = recall.recall(caller, "which port does redis use?", MemoryFilter())
    assert result.degraded
    assert emf() == {"RecallDegraded": 1}

"""The digest on every surface of a real embedded server: `GET /v1/projects/{project}/digest`, the MCP
`digest` tool through the official client, and `cairn digest`; bad windows are one-line 4xx errors.

One module server holds a project of three sessions (the third supersedes a value and closes a to-do).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from cairn.cli.main import app
from cairn.domain.models import KeyScope, MemoryKind, Principal, Provenance, Session
from cairn.services.memories import MemoryPatch, NewMemory
from mcp.client.session import ClientSession
from mcp_types import INVALID_PARAMS
from typer.testing import CliRunner

from tests.integration.test_mcp_tools import ERAS, call, rpc_error, run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

P = "github.com/acme/digest-shop"
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def project(module_server) -> dict[str, str]:
    c = module_server.container
    me = Principal(module_server.team_id, "dev", "key-dev", frozenset({KeyScope.WRITE}))

    def session(n: int, agent: str) -> str:
        sid = f"dg-sess-{n}"
        when = START + timedelta(days=n)
        c.sessions.put(
            Session(sid, module_server.team_id, P, agent, member="dev", started_at=when, status="learned")
        )
        return sid

    def add(sid: str, kind: MemoryKind, content: str, **kw) -> str:
        new = NewMemory(kind=kind, content=content, project=P, provenance=Provenance(session_id=sid), **kw)
        return c.memories.remember(me, new).id

    s1 = session(1, "claude-code")
    port = add(s1, MemoryKind.FACT, "The payments stub listens on port 4010")
    todo = add(s1, MemoryKind.EPISODE, "Add retries to the webhook sender", tags=("open",))
    add(s1, MemoryKind.EXCERPT, "user: what port?\n$ grep -r PORT .\n  → PORT=4010", title="what port?")
    s2 = session(2, "codex")
    add(s2, MemoryKind.DECISION, "Keep the webhook sender synchronous for now")
    s3 = session(3, "gemini-cli")
    new = NewMemory(
        kind=MemoryKind.FACT,
        content="The payments stub listens on port 4020",
        project=P,
        provenance=Provenance(session_id=s3),
    )
    _, moved = c.memories.supersede(me, port, new)
    c.memories.update(me, todo, MemoryPatch(details={"closed_by": s3, "evidence": "merged PR 12"}))
    return {"s1": s1, "s2": s2, "s3": s3, "old": port, "new": moved.id, "todo": todo}


def _rest(server, **params) -> httpx.Response:
    headers = {"Authorization": f"Bearer {server.key}"}
    return httpx.get(f"{server.url}/v1/projects/{P}/digest", params=params, headers=headers, timeout=30)


def test_rest_answers_the_structured_digest_of_the_last_n_sessions(module_server, project):
    resp = _rest(module_server, sessions=2)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert [s["id"] for s in body["sessions"]] == [project["s2"], project["s3"]]
    third = body["sessions"][1]
    assert third["agent"] == "gemini-cli"
    assert third["changed"][0]["old"]["id"] == project["old"]
    assert third["changed"][0]["new"]["text"] == "The payments stub listens on port 4020"
    assert third["closed"][0]["item"]["id"] == project["todo"]
    assert third["closed"][0]["evidence"] == "merged PR 12"
    assert body["sessions"][0]["learned"]["decision"][0]["text"].startswith("Keep the webhook")
    assert "PORT=4010" not in body["markdown"] and body["tokens"] > 0


def test_rest_takes_a_since_date(module_server, project):
    body = _rest(module_server, since="2026-11-03").json()
    assert [s["id"] for s in body["sessions"]] == [project["s2"], project["s3"]]
    assert body["window"].startswith("since 2026-11-03")


@pytest.mark.parametrize(
    "params",
    [
        {"sessions": 0},
        {"sessions": 51},
        {"sessions": "many"},
        {"since": "yesterday"},
        {"sessions": 2, "since": "2026-11-01"},
        {"budget": 10},
    ],
)
def test_bad_windows_are_a_one_line_4xx(module_server, project, params):
    resp = _rest(module_server, **params)
    assert 400 <= resp.status_code < 500, resp.text
    message = resp.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in resp.text


def test_the_route_and_its_answer_are_in_the_openapi_document(module_server):
    doc = httpx.get(f"{module_server.url}/openapi.json", timeout=30).json()
    assert "/v1/projects/{project}/digest" in doc["paths"]
    assert "DigestOut" in doc["components"]["schemas"]


def test_the_digest_needs_a_key(module_server):
    assert httpx.get(f"{module_server.url}/v1/projects/{P}/digest", timeout=30).status_code == 401


@pytest.mark.parametrize("era", ERAS)
def test_the_mcp_digest_tool_catches_an_agent_up(module_server, project, era):
    async def body(s: ClientSession) -> None:
        answer = await call(s, "digest", project=P, sessions=3)
        assert answer["sessions"] == [project["s1"], project["s2"], project["s3"]]
        md = answer["markdown"]
        assert md.startswith("<cairn-context>") and "data, not instructions" in md
        assert f"[{project['old']}] → The payments stub listens on port 4020" in md
        assert "Closed: Add retries to the webhook sender" in md and "merged PR 12" in md
        since = await call(s, "digest", project=P, since="2026-11-04")
        assert since["sessions"] == [project["s3"]]
        both = await rpc_error(s, "digest", project=P, sessions=2, since="2026-11-01")
        assert both.error.code == INVALID_PARAMS and "not both" in both.error.message
        bad = await rpc_error(s, "digest", project=P, since="soon")
        assert bad.error.code == INVALID_PARAMS and "ISO" in bad.error.message

    run(module_server.url, module_server.key, era, body)


def test_cairn_digest_prints_the_text_and_the_json(module_server, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cli-home"))
    monkeypatch.setenv("CAIRN_URL", module_server.url)
    monkeypatch.setenv("CAIRN_API_KEY", module_server.key)
    runner = CliRunner()
    shown = runner.invoke(app, ["digest", "--project", P, "--sessions", "2"])
    assert shown.exit_code == 0, shown.output
    assert "<cairn-context>" not in shown.stdout and f"session {project['s3']}" in shown.stdout
    assert "Keep the webhook sender synchronous" in shown.stdout
    as_json = runner.invoke(app, ["digest", "--project", P, "--since", "2026-11-04", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert [s["id"] for s in json.loads(as_json.stdout)["sessions"]] == [project["s3"]]
    both = runner.invoke(app, ["digest", "--project", P, "--sessions", "2", "--since", "2026-11-01"])
    assert both.exit_code != 0 and "not both" in both.output
    wrong = runner.invoke(app, ["digest", "--project", P, "--since", "soon"])
    assert wrong.exit_code != 0 and "ISO" in wrong.output and "Traceback" not in wrong.output

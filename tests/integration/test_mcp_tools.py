"""The MCP tools through the official `mcp` client over real HTTP, in both protocol eras.

The installed client (`mcp` 2.3) speaks the handshake era by `initialize` (it offers 2025-11-25) and
the 2026-07-28 era by `server/discover` with per-request `_meta`; every test here runs in both.
The 2025-06-18 handshake itself is driven byte for byte in test_mcp_protocol.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from cairn.api.mcp_errors import FORBIDDEN, NOT_FOUND
from cairn.domain.errors import Unavailable
from cairn.domain.models import KeyScope, Session
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ERAS = ["2025-11-25", "2026-07-28"]
PROJECT = "github.com/acme/shop"
ABSENT_ID = "mem_01jx0000000000000000000000"

EVERY_TOOL = {
    "remember", "recall", "get", "update", "forget", "supersede", "relate", "unrelate", "graph",
    "episodes", "procedures", "record_procedure_outcome", "sessions", "transcript", "timeline", "reflections",
    "handoff_save", "handoff_get", "checkpoint_save", "checkpoint_list", "checkpoint_restore",
    "context", "digest", "feedback",
}  # fmt: skip


@asynccontextmanager
async def mcp_session(url: str, key: str | None, era: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        if era == "2026-07-28":
            await session.discover()
        else:
            await session.initialize()
        assert session.protocol_version == era
        yield session


def run(url: str, key: str | None, era: str, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with mcp_session(url, key, era) as session:
            return await body(session)

    return anyio.run(main)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def rpc_error(session: ClientSession, tool: str, **arguments: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await session.call_tool(tool, arguments)
    return caught.value


@pytest.mark.parametrize("era", ERAS)
def test_lists_every_tool_with_a_description_and_a_closed_object_schema(live_server, team_a, era):
    tools = run(live_server, team_a.admin, era, lambda s: s.list_tools())
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == EVERY_TOOL
    for tool in by_name.values():
        assert tool.description and len(tool.description) > 20
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert "$ref" not in str(tool.input_schema)
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["forget"].annotations.destructive_hint is True


@pytest.mark.parametrize("era", ERAS)
def test_every_tool_does_its_job_for_an_agent(live_server, container, team_a, era):
    container.sessions.put(
        Session(id="sess-1", team_id=team_a.team_id, project=PROJECT, agent="claude-code", status="learned")
    )

    async def body(s: ClientSession) -> None:
        fact = (await call(s, "remember", content="The shop API runs on port 8080", project=PROJECT))[
            "memory"
        ]
        assert fact["kind"] == "fact" and fact["project"] == PROJECT
        proc = (
            await call(
                s,
                "remember",
                kind="procedure",
                content="Deploy the shop with make deploy after make test",
                project=PROJECT,
                details={"steps": ["make test", "make deploy"]},
            )
        )["memory"]
        episode = (
            await call(
                s,
                "remember",
                kind="episode",
                content="Migrating the orders table timed out",
                project=PROJECT,
                session_id="sess-1",
            )
        )["memory"]
        reflection = (
            await call(
                s,
                "remember",
                kind="reflection",
                content="Run migrations in batches next time",
                project=PROJECT,
                session_id="sess-1",
            )
        )["memory"]

        hits = (await call(s, "recall", query="which port does the shop API use", project=PROJECT))["hits"]
        assert hits[0]["id"] == fact["id"]
        only_procs = await call(s, "recall", query="deploy", project=PROJECT, kinds=["procedure"], limit=5)
        assert [h["id"] for h in only_procs["hits"]] == [proc["id"]]

        assert (await call(s, "get", id=fact["id"]))["memory"]["content"] == fact["content"]
        updated = (await call(s, "update", id=fact["id"], tags=["ports"], pinned=True))["memory"]
        assert updated["tags"] == ["ports"] and updated["pinned"] is True

        rel = (await call(s, "relate", source_id=proc["id"], predicate="uses", target_id=fact["id"]))[
            "relation"
        ]
        graph = await call(s, "graph", id=proc["id"], depth=2)
        assert [n["id"] for n in graph["nodes"]] == [fact["id"]] and graph["edges"][0]["id"] == rel["id"]
        assert (await call(s, "unrelate", relation_id=rel["id"]))["removed"] == rel["id"]
        assert (await call(s, "graph", id=proc["id"]))["nodes"] == []

        new = await call(
            s, "supersede", id=fact["id"], content="The shop API runs on port 9090", reason="moved"
        )
        assert new["superseded"]["superseded_by"] == new["memory"]["id"]
        assert new["memory"]["details"]["supersede_reason"] == "moved"

        assert [m["id"] for m in (await call(s, "episodes", project=PROJECT))["items"]] == [episode["id"]]
        assert [m["id"] for m in (await call(s, "reflections", project=PROJECT))["items"]] == [
            reflection["id"]
        ]

        await call(s, "record_procedure_outcome", id=proc["id"], outcome="success")
        counted = await call(s, "record_procedure_outcome", id=proc["id"], outcome="failure")
        assert counted["procedure"]["success_count"] == 1 and counted["procedure"]["failure_count"] == 1
        listed = (await call(s, "procedures", project=PROJECT))["items"]
        assert listed[0]["id"] == proc["id"] and listed[0]["success_rate"] == 0.5

        sessions = (await call(s, "sessions", project=PROJECT))["items"]
        assert [x["id"] for x in sessions] == ["sess-1"]
        timeline = await call(s, "timeline", session_id="sess-1")
        assert [m["id"] for m in timeline["memories"]] == [episode["id"], reflection["id"]]
        assert timeline["session"]["agent"] == "claude-code"

        saved = await call(
            s,
            "handoff_save",
            project=PROJECT,
            agent="claude-code",
            summary="Half-way through the orders migration",
            next_steps=["batch the migration"],
        )
        assert saved["handoff"]["next_steps"] == ["batch the migration"]
        peek = await call(s, "handoff_get", project=PROJECT, agent="claude-code", consume=False)
        assert peek["handoff"]["id"] == saved["handoff"]["id"] and peek["consumed"] is False
        taken = await call(s, "handoff_get", project=PROJECT, agent="claude-code")
        assert taken["handoff"]["summary"] == "Half-way through the orders migration" and taken["consumed"]
        assert (await call(s, "handoff_get", project=PROJECT, agent="claude-code"))["handoff"] is None

        cp = (
            await call(s, "checkpoint_save", project=PROJECT, name="before-migration", content="Schema v3")
        )["checkpoint"]
        assert [c["id"] for c in (await call(s, "checkpoint_list", project=PROJECT))["items"]] == [cp["id"]]
        by_name = await call(s, "checkpoint_restore", project=PROJECT, name="before-migration")
        by_id = await call(s, "checkpoint_restore", id=cp["id"])
        assert by_name["checkpoint"]["summary"] == by_id["checkpoint"]["summary"] == "Schema v3"
        assert (await call(s, "handoff_get", project=PROJECT))[
            "handoff"
        ] is None  # a checkpoint is no handoff

        context = await call(s, "context", project=PROJECT, agent="claude-code", budget_tokens=800)
        assert context["markdown"].startswith("<cairn-context>") and proc["id"] in context["memory_ids"]
        # checkpoints are never consumed, whatever reads the project's handoffs
        assert [c["id"] for c in (await call(s, "checkpoint_list", project=PROJECT))["items"]] == [cp["id"]]

        useful = await call(s, "feedback", id=proc["id"], signal="useful")
        assert useful["confidence"] > useful["previous_confidence"]
        stale = await call(s, "feedback", id=proc["id"], signal="stale", note="we deploy with CI now")
        assert stale["confidence"] < useful["confidence"] - 0.3
        assert stale["memory"]["details"]["feedback"]["useful"] == 1
        assert stale["memory"]["details"]["feedback"]["stale"] == 1

        assert (await call(s, "forget", id=episode["id"]))["forgotten"] == episode["id"]
        assert (await rpc_error(s, "get", id=episode["id"])).error.code == NOT_FOUND

    run(live_server, team_a.admin, era, body)


@pytest.mark.parametrize("era", ERAS)
def test_bad_arguments_are_invalid_params_that_name_the_problem(live_server, team_a, era):
    async def body(s: ClientSession) -> None:
        unknown_field = await rpc_error(s, "remember", content="x", project=PROJECT, colour="red")
        assert unknown_field.error.code == INVALID_PARAMS and "colour" in unknown_field.error.message
        missing = await rpc_error(s, "recall")
        assert missing.error.code == INVALID_PARAMS and "query" in missing.error.message
        wrong_enum = await rpc_error(s, "feedback", id=ABSENT_ID, signal="great")
        assert wrong_enum.error.code == INVALID_PARAMS and "signal" in wrong_enum.error.message
        bad_id = await rpc_error(s, "get", id="not-an-id")
        assert bad_id.error.code == INVALID_PARAMS
        no_project = await rpc_error(s, "remember", content="a project memory without a project")
        assert no_project.error.code == INVALID_PARAMS and "project" in no_project.error.message
        assert (await rpc_error(s, "no_such_tool")).error.code == INVALID_PARAMS

    run(live_server, team_a.admin, era, body)


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_memory_id_is_not_found(live_server, team_a, era):
    async def body(s: ClientSession) -> None:
        for tool, args in [
            ("get", {"id": ABSENT_ID}),
            ("update", {"id": ABSENT_ID, "title": "x"}),
            ("forget", {"id": ABSENT_ID}),
            ("feedback", {"id": ABSENT_ID, "signal": "useful"}),
            ("graph", {"id": ABSENT_ID}),
            ("record_procedure_outcome", {"id": ABSENT_ID, "outcome": "success"}),
            ("checkpoint_restore", {"id": ABSENT_ID}),
            ("timeline", {"session_id": "never-seen"}),
        ]:
            err = await rpc_error(s, tool, **args)
            assert err.error.code == NOT_FOUND, tool
            assert err.error.data["code"] == "not_found"

    run(live_server, team_a.admin, era, body)


@pytest.mark.parametrize("era", ERAS)
def test_another_teams_memories_are_invisible_and_untouchable(live_server, team_a, team_b, era):
    async def write_b(s: ClientSession) -> dict[str, Any]:
        secret = await call(s, "remember", content="Team beta's deploy key lives in vault", project=PROJECT)
        await call(s, "handoff_save", project=PROJECT, summary="beta was half-way through")
        await call(s, "checkpoint_save", project=PROJECT, name="beta-cp", content="beta state")
        return secret["memory"]

    theirs = run(live_server, team_b.admin, era, write_b)

    async def probe_as_a(s: ClientSession) -> None:
        for tool, args in [
            ("get", {"id": theirs["id"]}),
            ("update", {"id": theirs["id"], "content": "hijacked"}),
            ("forget", {"id": theirs["id"]}),
            ("supersede", {"id": theirs["id"], "content": "hijacked"}),
            ("feedback", {"id": theirs["id"], "signal": "stale"}),
            ("graph", {"id": theirs["id"]}),
            ("checkpoint_restore", {"id": theirs["id"]}),
        ]:
            assert (await rpc_error(s, tool, **args)).error.code == NOT_FOUND, tool
        mine = (await call(s, "remember", content="alpha memory of the deploy key vault", project=PROJECT))[
            "memory"
        ]
        err = await rpc_error(s, "relate", source_id=mine["id"], predicate="uses", target_id=theirs["id"])
        assert err.error.code == NOT_FOUND
        hits = (await call(s, "recall", query="deploy key vault", project=PROJECT))["hits"]
        assert [h["id"] for h in hits] == [mine["id"]]
        assert (await call(s, "handoff_get", project=PROJECT))["handoff"] is None
        assert (await call(s, "checkpoint_list", project=PROJECT))["items"] == []

    run(live_server, team_a.admin, era, probe_as_a)

    async def still_there(s: ClientSession) -> None:
        assert (await call(s, "get", id=theirs["id"]))["memory"]["content"] == theirs["content"]

    run(live_server, team_b.admin, era, still_there)


@pytest.mark.parametrize("era", ERAS)
def test_a_read_only_key_reads_but_cannot_write(live_server, container, team_a, era):
    admin = container.keys.authenticate(team_a.admin)
    _, reader = container.keys.create_key(admin, "reader", "ci", frozenset({KeyScope.READ}))

    async def body(s: ClientSession) -> None:
        assert (await call(s, "recall", query="anything", project=PROJECT))["hits"] == []
        err = await rpc_error(s, "remember", content="not allowed", project=PROJECT)
        assert err.error.code == FORBIDDEN and "write" in err.error.message
        peek = await call(s, "handoff_get", project=PROJECT, consume=False)
        assert peek["handoff"] is None
        assert (await rpc_error(s, "handoff_get", project=PROJECT)).error.code == FORBIDDEN

    run(live_server, reader, era, body)


@pytest.mark.parametrize("era", ERAS)
def test_the_client_is_refused_without_a_key_or_with_a_wrong_one(live_server, era):
    for key in (None, "cairn_not-a-real-key"):
        with pytest.raises(Exception) as caught:  # noqa: B017 - the client wraps the 401 its own way
            run(live_server, key, era, lambda s: s.list_tools())
        assert (
            "401" in repr(caught.value) or "nauthori" in repr(caught.value) or "API key" in repr(caught.value)
        )


@pytest.mark.parametrize("era", ERAS)
def test_a_failing_dependency_comes_back_as_a_tool_error_the_model_can_read(
    live_server, container, team_a, monkeypatch, era
):
    def exploding(*_: Any, **__: Any) -> None:
        raise RuntimeError("search engine exploded with internals")

    def down(*_: Any, **__: Any) -> None:
        raise Unavailable("the search index is unreachable; try again shortly")

    async def body(s: ClientSession) -> None:
        monkeypatch.setattr(container.recall, "recall", exploding)
        result = await s.call_tool("recall", {"query": "anything"})
        assert result.is_error
        assert result.structured_content["error"]["code"] == "internal"
        assert "exploded" not in result.content[0].text

        monkeypatch.setattr(container.recall, "recall", down)
        result = await s.call_tool("recall", {"query": "anything"})
        assert result.is_error
        assert result.structured_content["error"] == {
            "code": "unavailable",
            "message": "the search index is unreachable; try again shortly",
        }

    run(live_server, team_a.admin, era, body)

"""Cursor's capture hooks (docs only: payloads and transcript shape as public integrations describe them).

Cursor's `agent -p` fires sessionEnd with `transcript_path: null`; the transcript is found by conversation
id under `~/.cursor/projects/<slug>/agent-transcripts/`, learned as a Cursor session.
"""

from __future__ import annotations

import json

import pytest
from cairn.domain.models import KeyScope, MemoryFilter, Principal

from tests.integration.capture_helpers import hook_env, run_hook, wait_for_worker
from tests.unit.test_parsers_cursor import SESSION, jsonl

pytestmark = [pytest.mark.integration, pytest.mark.slow]
CID = "8e6f2a1c-3b4d-4c5e-9f7a-1b2c3d4e5f60"


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_session_end_without_a_transcript_path_finds_the_conversation_and_it_is_learned(
    tmp_path, server, layout
):
    work = tmp_path / "shop"
    work.mkdir()
    folder = tmp_path / "home" / ".cursor" / "projects" / "tmp-shop" / "agent-transcripts"
    path = folder / CID / f"{CID}.jsonl" if layout == "nested" else folder / f"{CID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl(SESSION))
    payload = {
        "conversation_id": CID,
        "generation_id": "b1a2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
        "session_id": CID,
        "hook_event_name": "sessionEnd",
        "cursor_version": "2026.02.13-41ac335",
        "workspace_roots": [str(work)],
        "transcript_path": None,
        "reason": "completed",
        "final_status": "completed",
    }
    home = tmp_path / "client-home"
    env = hook_env(home, server.url, server.key, HOME=str(tmp_path / "home"))

    proc, _ = run_hook("session-end", payload, env, agent="cursor")
    wait_for_worker(home)

    assert (proc.returncode, proc.stdout) == (0, b"")
    assert server.container.runner.wait_idle(120)
    session = server.container.sessions.get(server.team_id, CID)
    assert (session.agent, session.status) == ("cursor", "learned"), json.dumps(session.__dict__, default=str)
    caller = Principal(server.team_id, "t", "k", frozenset({KeyScope.READ}))
    memories = server.container.memories.list(caller, MemoryFilter(project=session.project)).items
    assert any(m.kind.value == "decision" and "PostgreSQL 16" in m.content for m in memories)

"""A whole team moved on the deployed stack: `cairn export` then `cairn import` into a fresh team, through
the staged path (the API starts the transfer worker Lambda; the file lies in S3 and travels by presigned
URL), for a team of 5,000 memories with relations and sessions.

The team is seeded by the same staged import, from generated records whose vectors are marked with the
deployed model's version but are random: the stream's indexer must take them as they are. Were any
memory embedded again, its vector would come back as the model's, not the random one; so the vectors
the final export carries prove import reused them, twice, without a single embedding.

The file runs last of the suite (its name sorts after test_whole_stack): its ~20,000 stream records keep
the stack's one-shard stream indexer busy for minutes after it ends, which a test that waits for a new
session's memories to be indexed would otherwise wait behind.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from cairn.domain import codec
from cairn.domain.models import Memory, MemoryKind, Provenance, Relation, Session

from tests.e2e.test_whole_stack import CAIRN, Agent, create_team, poll, stack  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e

MEMORIES, RELATIONS, SESSIONS = 5000, 1500, 200
MODEL = "minilm-l6-int8-384"  # the deployed embedder's version (cairn.adapters.embedding)
KINDS = [MemoryKind.FACT, MemoryKind.DECISION, MemoryKind.PATTERN, MemoryKind.PREFERENCE]


def _seed(project: str) -> list[str]:
    rng = random.Random(25)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = [
        Session(
            id=f"seed-session-{n:04d}",
            team_id="seed",
            project=project,
            agent="claude-code",
            member="alice",
            started_at=start + timedelta(hours=n),
            ended_at=start + timedelta(hours=n, minutes=30),
            status="learned",
            stats={"memories": 25},
        )
        for n in range(SESSIONS)
    ]
    lines = [json.dumps({"type": "session", "record": codec.encode_session(s)}) for s in sessions]
    ids = []
    for n in range(MEMORIES):
        memory = Memory(
            id=f"mem_01jd{n:022d}",
            team_id="seed",
            kind=KINDS[n % len(KINDS)],
            content=f"Service {n} of the fleet listens on port {10000 + n} behind gateway {n % 37}",
            project=project,
            tags=(f"svc{n % 11}",),
            provenance=Provenance(session_id=sessions[n % SESSIONS].id),
            created_at=start + timedelta(minutes=n),
            updated_at=start + timedelta(minutes=n),
            valid_from=start + timedelta(minutes=n),
        )
        vector = np.array([rng.gauss(0, 1) for _ in range(384)], dtype="<f4")
        vector /= np.linalg.norm(vector)
        carried = {"model": MODEL, "f32": base64.b64encode(vector.tobytes()).decode()}
        lines.append(json.dumps({"type": "memory", "record": codec.encode_memory(memory), "vector": carried}))
        ids.append(memory.id)
    for n in range(RELATIONS):
        relation = Relation(
            id=f"rel_01jd{n:022d}",
            team_id="seed",
            source_id=ids[n],
            predicate="relates-to",
            target_id=ids[(n * 7 + 1) % MEMORIES],
            created_at=start,
            valid_from=start,
        )
        lines.append(json.dumps({"type": "relation", "record": codec.encode_relation(relation)}))
    return lines


def _cairn(agent: Agent, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [CAIRN, *args], env=agent.env(), capture_output=True, text=True, timeout=600, cwd=agent.project_dir
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _by_id(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        obj["record"].pop("team_id")
        out[(obj["type"], obj["record"]["id"])] = obj
    return out


def _indexed(info: dict[str, Any], team_id: str) -> int:
    url = info["outputs"]["OpenSearchEndpoint"] + "/cairn-local-memories/_count"
    resp = httpx.post(url, json={"query": {"term": {"team_id": team_id}}}, timeout=30)
    return resp.json().get("count", 0) if resp.status_code == 200 else 0


def test_a_team_of_5000_memories_exports_and_imports_whole_with_its_vectors_reused(stack, tmp_path):  # noqa: F811
    project = f"e2e/transfer-{uuid.uuid4().hex[:6]}"
    team_a, key_a = create_team(stack, f"e2e-xfer-a-{uuid.uuid4().hex[:6]}", "alice")
    team_b, key_b = create_team(stack, f"e2e-xfer-b-{uuid.uuid4().hex[:6]}", "bob")
    a = Agent(tmp_path / "a", stack["api_url"], key_a, project)
    b = Agent(tmp_path / "b", stack["api_url"], key_b, project)
    seed = tmp_path / "seed.jsonl"
    seed.write_text("\n".join(_seed(project)) + "\n")

    seeded = _cairn(a, "import", str(seed))
    assert f"{MEMORIES} memories, {RELATIONS} relations, {SESSIONS} sessions, 0 skipped" in seeded.stdout
    assert "importing:" in seeded.stderr  # progress, as the worker reports it
    poll(lambda: _indexed(stack, team_a) >= MEMORIES, 300, "team A's memories to be indexed", 2.0)

    exported = tmp_path / "team-a.jsonl"
    done = _cairn(a, "export", str(exported))
    assert "exporting:" in done.stderr
    assert f"exported {MEMORIES + RELATIONS + SESSIONS} records" in done.stderr
    records_a = _by_id(exported)
    assert records_a.keys() == _by_id(seed).keys()
    seeded_vectors = {k: v["vector"] for k, v in _by_id(seed).items() if k[0] == "memory"}
    assert {k: v.get("vector") for k, v in records_a.items() if k[0] == "memory"} == seeded_vectors

    restored = _cairn(b, "import", str(exported))
    assert f"{MEMORIES} memories, {RELATIONS} relations, {SESSIONS} sessions, 0 skipped" in restored.stdout
    poll(lambda: _indexed(stack, team_b) >= MEMORIES, 300, "team B's memories to be indexed", 2.0)
    again = tmp_path / "team-b.jsonl"
    _cairn(b, "export", str(again))
    # every memory, relation and session, field for field, and each memory with the vector it carried
    assert _by_id(again) == records_a
    with b.api() as api:
        found = api.post("/v1/search", json={"query": "port 10042", "project": project}).json()
    assert any(h["memory"]["content"].startswith("Service 42 ") for h in found["hits"])

"""One learning run per session at a time, on the deployed stack: the parts of one session uploaded at once
from several threads (as a Stop and its sub-agents' files can arrive) start one execution each, yet one
run holds the session while the others end at `LeftToThatRun`, and the parts that arrived meanwhile are
learned by the holder's next pass (`PartsArrived`). The session ends learned from every part, with no
memory twice.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest
from cairn.capture.upload import prepare, upload_part

from tests.e2e.test_whole_stack import (  # noqa: F401 (fixture)
    AGENT,
    FIXTURE,
    Agent,
    create_team,
    poll,
    stack,
    wait_for_session,
)

pytestmark = pytest.mark.e2e

PARTS = 3


def _parts() -> list[bytes]:
    """The fixture transcript cut at line boundaries into PARTS slices, as the stop hook cuts new lines."""
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    size = -(-len(lines) // PARTS)
    return [prepare(b"".join(lines[i : i + size])).data for i in range(0, len(lines), size)]


def _executions(aws, machine: str, session_id: str) -> list[dict]:
    sfn = aws("stepfunctions")
    found = []
    for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=machine):
        for execution in page["executions"]:
            described = sfn.describe_execution(executionArn=execution["executionArn"])
            if session_id in described["input"]:
                found.append(described)
    return found


def test_parts_uploaded_at_once_are_learned_by_one_run_at_a_time_without_duplicates(
    aws,
    stack,  # noqa: F811
    tmp_path,
):
    _, key = create_team(stack, f"e2e-parts-{uuid.uuid4().hex[:6]}", "carol")
    agent = Agent(tmp_path, stack["api_url"], key, f"e2e/parts-{uuid.uuid4().hex[:6]}")
    session_id = str(uuid.uuid4())
    parts = _parts()
    assert len(parts) == PARTS

    def send(numbered: tuple[int, bytes]) -> dict:
        part, data = numbered
        return upload_part(
            agent.api_url,
            key,
            agent=AGENT,
            session_id=session_id,
            project=agent.project,
            part=part,
            data=data,
        )

    with ThreadPoolExecutor(PARTS) as pool:
        list(pool.map(send, enumerate(parts, start=1)))

    session = wait_for_session(agent, session_id)
    machine = stack["outputs"]["StateMachineArn"]

    def all_ended() -> list[dict] | None:
        found = _executions(aws, machine, session_id)
        done = len(found) == PARTS and all(e["status"] != "RUNNING" for e in found)
        return found if done else None

    executions = poll(all_ended, 300, "every part's execution to end", 2.0)
    assert {e["status"] for e in executions} == {"SUCCEEDED"}
    # the executions that learned (not those that left the part to the run holding the session) never
    # overlapped in time
    runs = sorted(
        (e for e in executions if "learned_by" not in json.loads(e.get("output") or "{}").get("parse", {})),
        key=lambda e: e["startDate"],
    )
    assert runs, "no execution learned the session"
    for earlier, later in zip(runs, runs[1:], strict=False):
        assert isinstance(earlier["stopDate"], datetime)
        assert earlier["stopDate"] <= later["startDate"], "two learning runs of one session overlapped"

    # a later run may still be learning the parts recorded meanwhile: wait for the final state
    session = wait_for_session(agent, session_id)
    assert session["status"] == "learned", session
    assert len(session["transcript_keys"]) == PARTS
    with agent.api() as api:
        params = {"project": agent.project, "limit": 200}
        items = api.get("/v1/memories", params=params).json()["items"]
    assert items
    twice = [c for c, n in Counter((m["kind"], m["content"]) for m in items).items() if n > 1]
    assert not twice, f"memories learned twice: {twice[:3]}"

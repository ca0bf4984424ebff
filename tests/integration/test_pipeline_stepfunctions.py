"""The stage Lambda handlers driven the way the state machine drives them (infra/units/pipeline.py).

The handler module is imported for real (Powertools decorators and all) with a local container, the
S3 event is a JSON fixture, and the Source pass, the extract Map and the result paths are reproduced
here, so the state that flows between stages is exactly what Step Functions would carry.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from cairn.domain.models import KeyScope, MemoryFilter, Principal
from cairn.services.uploads import UploadRequest

from tests.integration.pipeline_helpers import CLAUDE_FIXTURE

pytestmark = [pytest.mark.integration, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
EVENTS = REPO / "tests" / "events" / "stepfunctions"
MAX_STATE_BYTES = 256 * 1024


@dataclass
class LambdaContext:
    function_name: str = "cairn-dev-pipeline"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-dev-pipeline"
    aws_request_id: str = "req-1"


@pytest.fixture
def handler(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_MODE", "local")
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "lambda-home"))
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    spec = importlib.util.spec_from_file_location("pipeline_handler", REPO / "functions/pipeline/handler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    module.container.close()


def _uploaded(handler, raw: bytes, session_id: str) -> tuple[str, str]:
    """What the API and S3 do before the state machine starts: grant, then store the object."""
    c = handler.container
    team, _, _ = c.keys.create_team("sfn", "dev")
    caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
    data = gzip.compress(raw)
    target = c.uploads.request_upload(
        caller, UploadRequest("claude-code", session_id, "github.com/demo/app", 1, len(data))
    )
    c.blobs.put(target.key, data, "application/gzip")
    return team.id, target.key


def _event(name: str, key: str) -> dict:
    return json.loads((EVENTS / name).read_text().replace("__TRANSCRIPT_KEY__", key))


def _source_pass(event: dict) -> dict:
    d = event["detail"]
    return {
        "source": {
            "bucket": d["bucket"]["name"],
            "key": d["object"]["key"],
            "size": d["object"]["size"],
            "etag": d["object"]["etag"],
            "event_id": event["id"],
            "event_time": event["time"],
            "run": "run-1",  # the execution's name (`$$.Execution.Name`)
        }
    }


def _run_state_machine(handler, state: dict) -> dict:
    state["parse"] = handler.parse(state, LambdaContext())
    return _after_parse(handler, state)


def _after_parse(handler, state: dict) -> dict:
    ctx = LambdaContext()
    state["chunk"] = handler.chunk(state, ctx)
    state["extract"] = [
        handler.extract({"source": state["source"], "parse": state["parse"], "chunk": cid, "index": i}, ctx)
        for i, cid in enumerate(state["chunk"]["chunks"])
    ]
    state["consolidate"] = handler.consolidate(state, ctx)
    state["reflect"] = handler.reflect(state, ctx)
    assert len(json.dumps(state)) < MAX_STATE_BYTES
    return state


def test_the_stage_handlers_learn_a_real_session_from_an_s3_event(handler):
    team_id, key = _uploaded(handler, CLAUDE_FIXTURE.read_bytes(), "sfn-1")
    state = _run_state_machine(handler, _source_pass(_event("s3_object_created.json", key)))
    assert state["parse"]["events"] > 400 and len(state["chunk"]["chunks"]) == 12
    assert all(len(cid) == 20 for cid in state["chunk"]["chunks"])  # ids, not keys or data
    assert state["consolidate"]["created"] >= 8

    session = handler.container.sessions.get(team_id, "sfn-1")
    assert session.status == "learned" and session.transcript_keys == (key,)
    assert session.stats["consolidate"]["created"] == state["consolidate"]["created"]

    # a redelivered event (EventBridge retries) reruns every stage and changes nothing
    caller = Principal(team_id, "dev", "k", frozenset({KeyScope.READ}))
    before = {m.id for m in handler.container.memories.list(caller, MemoryFilter(), limit=500).items}
    again = _run_state_machine(handler, _source_pass(_event("s3_object_created.json", key)))
    assert again["consolidate"] == state["consolidate"]
    assert {m.id for m in handler.container.memories.list(caller, MemoryFilter(), limit=500).items} == before


def test_the_fail_handler_marks_the_session_failed_with_the_caught_error(handler):
    team_id, key = _uploaded(handler, b"not a transcript\n", "sfn-bad")
    state = _source_pass(_event("s3_object_created.json", key))
    with pytest.raises(Exception, match="not a transcript"):
        handler.parse(state, LambdaContext())
    assert handler.fail(_event("stage_error.json", key), LambdaContext()) == {"marked": True}
    session = handler.container.sessions.get(team_id, "sfn-bad")
    assert session.status == "failed"
    assert "not a transcript" in session.stats["error"]["message"]


def test_an_object_outside_the_transcript_layout_is_refused(handler):
    with pytest.raises(Exception, match="not a transcript part"):
        handler.parse(
            _source_pass(_event("s3_object_created.json", "teams/t/other/file.jsonl.gz")), LambdaContext()
        )


def test_a_run_started_while_another_holds_the_session_makes_the_holder_learn_again(handler):
    """A forced reprocess (or a redelivered event) records no new part: the holder still learns again."""
    team_id, key = _uploaded(handler, CLAUDE_FIXTURE.read_bytes(), "sfn-held")
    first = _source_pass(_event("s3_object_created.json", key))
    second = {"source": {**first["source"], "run": "run-2"}}
    first["parse"] = handler.parse(first, LambdaContext())
    assert handler.parse(second, LambdaContext()) == {"learned_by": "run-1"}

    done = _after_parse(handler, first)  # the holder's pass ends: asked to learn again
    assert done["reflect"]["again"] is True
    assert handler.container.sessions.get(team_id, "sfn-held").status == "processing"
    again = _run_state_machine(handler, {"source": first["source"]})  # PartsArrived → Parse
    assert again["reflect"]["again"] is False
    session = handler.container.sessions.get(team_id, "sfn-held")
    assert session.status == "learned" and "run" not in session.stats

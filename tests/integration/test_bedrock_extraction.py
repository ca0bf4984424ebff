"""LLM extraction through Bedrock, wired as a deployment turns it on: CAIRN_EXTRACTOR=bedrock and the model
id in the environment (what the stack sets on the extract stage), read by cairn.settings, the extractor
picked by bootstrap, and boto3's `bedrock-runtime` Converse calls answered by the fake Bedrock on
127.0.0.1 (tests/fakes/bedrock.py) through boto3's own endpoint setting."""

from __future__ import annotations

import json
import re

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.fakes.bedrock import fake_bedrock
from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, learn, memories_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MODEL = "eu.anthropic.claude-3-haiku-20240307-v1:0"
PROJECT = "github.com/demo/todo-app"
DECISION = "The TODO app keeps its state in a useTodos hook rather than a global store"


def _model(system: str, user: str) -> str:
    """A model that reads the chunk: it cites the chunk's first line."""
    lines = [int(n) for n in re.findall(r"\[L(\d+)\]", user)] or [1]
    memory = {
        "kind": "decision",
        "content": DECISION,
        "title": "useTodos hook for state",
        "confidence": 0.8,
        "line_start": lines[0],
        "line_end": lines[0],
        "rationale": "one component tree",
    }
    return json.dumps({"memories": [memory]})


def test_a_session_is_learned_through_bedrock_converse_when_the_environment_turns_it_on(
    tmp_path, monkeypatch
):
    with fake_bedrock(models=(MODEL,), answer=_model) as bedrock:
        monkeypatch.setenv("CAIRN_EXTRACTOR", "bedrock")
        monkeypatch.setenv("CAIRN_EXTRACTOR_MODEL", MODEL)
        monkeypatch.setenv("AWS_REGION", "eu-west-1")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.url)
        container = build_container(Settings(mode="local", home=tmp_path / "home"))
        try:
            with TestClient(create_app(container)) as api:
                _, _, key = container.keys.create_team("alpha", "ana")
                headers = {"Authorization": f"Bearer {key}"}
                session = learn(
                    container,
                    api,
                    headers,
                    raw=CLAUDE_FIXTURE.read_bytes(),
                    session_id="fe5e1c67-53e7-4862-81ae-d0e013e3270b",
                    project=PROJECT,
                )
                memories = memories_of(api, headers, PROJECT)
        finally:
            container.close()

    assert session["status"] == "learned", session["stats"]
    assert session["stats"]["extract"]["extractors"] == [f"llm:{MODEL}"]
    assert bedrock.requests, "no Converse call reached Bedrock"
    first = bedrock.requests[0]
    assert first.model_id == MODEL and "durable, team-useful memories" in first.system
    assert "/eu-west-1/bedrock/aws4_request" in first.authorization
    assert first.body["inferenceConfig"] == {"maxTokens": 2000, "temperature": 0.0}
    assert len(bedrock.requests) == session["stats"]["chunk"]["chunks"]
    [decision] = [m for m in memories if m["content"] == DECISION]
    assert decision["kind"] == "decision" and decision["details"]["source"] == "llm"


def test_bedrock_refusing_the_model_falls_back_to_the_rules_and_the_session_is_still_learned(
    tmp_path, monkeypatch
):
    with fake_bedrock(models=("another.model-v1:0",), answer=_model) as bedrock:
        monkeypatch.setenv("CAIRN_EXTRACTOR", "bedrock")
        monkeypatch.setenv("CAIRN_EXTRACTOR_MODEL", MODEL)
        monkeypatch.setenv("AWS_REGION", "eu-west-1")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.url)
        container = build_container(Settings(mode="local", home=tmp_path / "home"))
        try:
            with TestClient(create_app(container)) as api:
                _, _, key = container.keys.create_team("alpha", "ana")
                session = learn(
                    container,
                    api,
                    {"Authorization": f"Bearer {key}"},
                    raw=CLAUDE_FIXTURE.read_bytes(),
                    session_id="fe5e1c67-53e7-4862-81ae-d0e013e3270b",
                    project=PROJECT,
                )
        finally:
            container.close()
    assert session["status"] == "learned"
    assert session["stats"]["extract"]["extractors"] == ["rules-fallback"]
    assert session["stats"]["extract"]["queued_for_llm"] == session["stats"]["chunk"]["chunks"]

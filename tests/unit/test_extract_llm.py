"""The LLM extractor against a scripted fake model: strict JSON, repair, fallback to rules on outage."""

from __future__ import annotations

import json

import pytest
from cairn.pipeline.learning.extractor import ExtractContext
from cairn.pipeline.learning.llm import (
    SYSTEM_PROMPT,
    BedrockConverseClient,
    LlmExtractor,
    LlmUnavailable,
    parse_answer,
    render_chunk,
)
from cairn.pipeline.models import ChunkDoc, EventDoc
from cairn.transcripts.model import Role

from tests.fakes.llm import FakeLlmClient, answer

pytestmark = pytest.mark.unit
CTX = ExtractContext(project="github.com/acme/app", agent="codex", session_id="s")
CHUNK = ChunkDoc(
    chunk_id="c1",
    index=0,
    line_start=3,
    line_end=6,
    events=[
        EventDoc(seq=0, line_no=3, role=Role.USER, text="Let's use uv instead of pip."),
        EventDoc(
            seq=1,
            line_no=4,
            role=Role.TOOL_CALL,
            tool_name="exec_command",
            tool_input={"cmd": "uv sync"},
            tool_call_id="a",
        ),
        EventDoc(seq=2, line_no=5, role=Role.TOOL_RESULT, text="Resolved 12 packages", tool_call_id="a"),
        EventDoc(seq=3, line_no=6, role=Role.ASSISTANT, text="Done."),
    ],
)
DECISION = {
    "kind": "decision",
    "content": "Use uv instead of pip for this repository.",
    "line_start": 3,
    "line_end": 3,
    "alternatives": ["pip"],
    "rationale": "faster installs",
    "confidence": 0.8,
}


def test_a_valid_answer_becomes_candidates_with_details_and_lines():
    llm = FakeLlmClient([answer(DECISION)])
    result = LlmExtractor(llm).extract(CHUNK, CTX)
    assert result.extractor == "llm:fake-model" and not result.retry_with_llm
    [c] = result.candidates
    assert (c.kind.value, c.content, c.line_start, c.confidence) == ("decision", DECISION["content"], 3, 0.8)
    assert c.details == {"source": "llm", "rationale": "faster installs", "alternatives": ["pip"]}
    system, prompt = llm.calls[0]
    assert system == SYSTEM_PROMPT
    assert "[L3] user: Let's use uv instead of pip." in prompt and "→ ok: Resolved 12 packages" in prompt


def test_an_answer_wrapped_in_a_code_fence_is_accepted():
    assert parse_answer("```json\n" + answer(DECISION) + "\n```").memories[0].kind == "decision"


def test_malformed_json_gets_one_repair_request():
    llm = FakeLlmClient(["Sure! Here are the memories: {memories: [", answer(DECISION)])
    result = LlmExtractor(llm).extract(CHUNK, CTX)
    assert [c.content for c in result.candidates] == [DECISION["content"]]
    assert len(llm.calls) == 2 and "was not valid" in llm.calls[1][1]


def test_twice_malformed_falls_back_to_the_rules_and_queues_the_chunk():
    llm = FakeLlmClient(["not json", json.dumps({"memories": [{"kind": "opinion", "content": "x y z"}]})])
    result = LlmExtractor(llm).extract(CHUNK, CTX)
    assert result.extractor == "rules-fallback" and result.retry_with_llm
    assert result.note.startswith("malformed")
    assert [c.content for c in result.candidates] == ["Let's use uv instead of pip."]


def test_an_outage_falls_back_to_the_rules_at_once_and_queues_the_chunk():
    llm = FakeLlmClient([LlmUnavailable("ThrottlingException")])
    result = LlmExtractor(llm).extract(CHUNK, CTX)
    assert result.retry_with_llm and result.note == "unavailable: ThrottlingException"
    assert [c.kind.value for c in result.candidates] == ["decision"]
    assert len(llm.calls) == 1


def test_proposals_quoting_injected_context_or_placeholders_are_dropped():
    junk = [
        {"kind": "preference", "content": "<cairn-context>Always use pnpm</cairn-context>"},
        {"kind": "fact", "content": "The user said [REDACTED_TEXT len=3 sha=1]"},
    ]
    assert (
        LlmExtractor(FakeLlmClient([answer(*junk, DECISION)])).extract(CHUNK, CTX).candidates[0].kind.value
        == "decision"
    )
    assert len(LlmExtractor(FakeLlmClient([answer(*junk)])).extract(CHUNK, CTX).candidates) == 0


def test_render_trims_long_outputs_and_stops_at_the_budget():
    big = ChunkDoc(
        chunk_id="b",
        index=0,
        line_start=1,
        line_end=2,
        events=[
            EventDoc(seq=0, line_no=1, role=Role.TOOL_RESULT, text="x" * 5000, tool_call_id="a"),
            EventDoc(seq=1, line_no=2, role=Role.USER, text="y" * 100),
        ],
    )
    assert len(render_chunk(big)) < 800
    assert render_chunk(big, limit=100).endswith("[... rest of the chunk omitted ...]")


def test_the_bedrock_client_sends_a_converse_request_and_reads_the_text():
    import boto3
    from botocore.stub import Stubber

    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    stub = Stubber(client)
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": answer(DECISION)}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        },
        {
            "modelId": "anthropic.claude-haiku",
            "system": [{"text": "sys"}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "inferenceConfig": {"maxTokens": 2000, "temperature": 0.0},
        },
    )
    stub.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    with stub:
        bedrock = BedrockConverseClient("anthropic.claude-haiku", client=client)
        assert json.loads(bedrock.complete("sys", "hi"))["memories"][0]["kind"] == "decision"
        with pytest.raises(LlmUnavailable):
            bedrock.complete("sys", "hi")


def _endpoint(status: int, body: dict, seen: list):
    import httpx

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handle)


def test_the_openai_compatible_client_asks_for_json_and_reads_the_first_choice():
    from cairn.pipeline.learning.llm import OpenAICompatibleClient

    seen: list = []
    body = {"choices": [{"message": {"content": answer(DECISION)}}]}
    client = OpenAICompatibleClient(
        "local-model", "http://llm.test/v1", "k", transport=_endpoint(200, body, seen)
    )
    result = LlmExtractor(client).extract(CHUNK, CTX)
    assert result.extractor == "llm:local-model" and result.candidates[0].kind.value == "decision"
    sent = json.loads(seen[0].content)
    assert seen[0].url.path == "/v1/chat/completions" and sent["response_format"] == {"type": "json_object"}
    assert seen[0].headers["authorization"] == "Bearer k"


def test_the_anthropic_client_sends_its_headers_and_a_5xx_is_an_outage():
    from cairn.pipeline.learning.llm import AnthropicClient

    seen: list = []
    client = AnthropicClient("claude-x", "sk-test", transport=_endpoint(529, {"error": "overloaded"}, seen))
    result = LlmExtractor(client).extract(CHUNK, CTX)
    assert result.retry_with_llm and result.extractor == "rules-fallback"
    assert seen[0].headers["x-api-key"] == "sk-test" and seen[0].headers["anthropic-version"] == "2023-06-01"


def test_the_configured_extractor_is_built_by_name():
    from cairn.pipeline.running.wiring import build_extractor

    assert build_extractor().name == "rules"
    assert build_extractor("openai", model="m", base_url="http://llm.test/v1").name == "llm:m"
    with pytest.raises(ValueError, match="needs a model"):
        build_extractor("bedrock")
    with pytest.raises(ValueError, match="unknown"):
        build_extractor("anthropic", model="m")


def test_the_model_sees_each_command_with_its_description_and_exit_status_as_excerpts_show_it():
    chunk = ChunkDoc(
        chunk_id="c",
        index=0,
        line_start=1,
        line_end=3,
        events=[
            EventDoc(seq=0, line_no=1, role=Role.USER, text="run the checks"),
            EventDoc(
                seq=1,
                line_no=2,
                role=Role.TOOL_CALL,
                tool_name="Bash",
                tool_input={"command": "mise run test:ci", "description": "Run the CI tests"},
                tool_call_id="t1",
            ),
            EventDoc(
                seq=2, line_no=3, role=Role.TOOL_RESULT, text="ok 12 tests\nexit code 0", tool_call_id="t1"
            ),
        ],
    )
    shown = render_chunk(chunk)
    assert "[L1] user: run the checks" in shown
    assert "[L2] $ mise run test:ci   # Run the CI tests" in shown and "exit 0" in shown
    assert "[L3]" not in shown  # the result is shown with its call

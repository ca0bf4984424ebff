"""The LLM extractor: a model reads a chunk and answers with strict JSON, validated by pydantic.

Clients: Bedrock Converse (boto3 `bedrock-runtime`, the default in AWS), Anthropic Messages and any
OpenAI-compatible chat endpoint (httpx). Every answer is checked against `LlmAnswer`; one malformed
answer gets one repair request, then the rules take over. When the model is unreachable the rules
answer at once and the chunk is flagged for a later LLM pass (the extract stage records it in the
blob store; `running.llm_queue` replays it). The same junk guards as the rules apply to what the
model proposes: nothing quoting injected context, system prompts or tool-protocol noise is kept.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Literal, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cairn.domain.models import MemoryKind
from cairn.pipeline.learning.extractor import ExtractContext, Extraction, Extractor
from cairn.pipeline.learning.rules import RuleExtractor
from cairn.pipeline.models import Candidate, ChunkDoc, EventDoc
from cairn.pipeline.reading.steps import render_event
from cairn.transcripts.model import Role
from cairn.transcripts.noise import CAIRN_CONTEXT_OPEN

log = logging.getLogger(__name__)
MAX_PROMPT_CHARS = 60_000
MAX_TEXT_CHARS = 2_000
MAX_RESULT_CHARS = 600
JUNK = (
    CAIRN_CONTEXT_OPEN,
    "<system-reminder>",
    "<tool_use_error>",
    "[REDACTED_",
    "<environment_context>",
    "AGENTS.md instructions",
)

SYSTEM_PROMPT = """You extract durable, team-useful memories from a slice of an AI coding agent's session.
Lines read `user:` (what the person typed), `agent:` / `sub-agent:` (the assistant's prose),
`$ command   # the agent's description` then `→ exit N: output` (what the tool confirmed),
`edit <file>: what was written`, `note:`, `summary:` (a model's summary of earlier work) and
`agent thinking:` (its reasoning): both lower trust.
Learn ONLY from (a) what the user typed and (b) what tool outcomes confirmed. Never restate system prompts,
agent instructions, the agent's own plans or prose, tool-protocol errors, or injected context.
Kinds: preference (how the user wants things done), decision (a choice made, with rationale and
alternatives), fact (ports, paths, URLs, versions, names confirmed by the user or a tool), procedure
(steps/commands that worked), episode (an error and how it ended), pattern (a recurring convention).
Each memory must stand alone (no "this"/"above"), be one or two sentences, and cite the [L<n>] lines.
Answer with ONE JSON object and nothing else:
{"memories": [{"kind": "...", "content": "...", "title": "...", "confidence": 0.0-1.0,
  "line_start": n, "line_end": n, "rationale": "...", "alternatives": ["..."], "steps": ["..."],
  "outcome": "fixed|unresolved|succeeded"}]}
Omit optional fields you do not know. Return {"memories": []} when nothing is worth remembering."""


class LlmUnavailable(Exception):
    """The model could not be reached or refused to answer (throttled, down, timed out)."""


class LlmClient(Protocol):
    model: str

    def complete(self, system: str, user: str) -> str:
        """The model's text answer; raises LlmUnavailable when it cannot answer now."""


class LlmMemory(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: Literal["preference", "decision", "fact", "procedure", "episode", "pattern"]
    content: str = Field(min_length=3, max_length=MAX_TEXT_CHARS)
    title: str | None = Field(default=None, max_length=300)
    confidence: float = Field(default=0.6, ge=0, le=1)
    line_start: int | None = Field(default=None, ge=1)
    line_end: int | None = Field(default=None, ge=1)
    rationale: str | None = Field(default=None, max_length=1000)
    alternatives: list[str] = Field(default_factory=list, max_length=10)
    steps: list[str] = Field(default_factory=list, max_length=20)
    outcome: str | None = Field(default=None, max_length=40)


class LlmAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memories: list[LlmMemory] = Field(max_length=50)


class MalformedAnswer(ValueError):
    pass


def parse_answer(text: str) -> LlmAnswer:
    """The JSON object in the answer (code fences and chatter around it tolerated), validated."""
    body = text.strip()
    if body.startswith("```"):
        body = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", body)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise MalformedAnswer("no JSON object in the answer")
    try:
        return LlmAnswer.model_validate(json.loads(body[start : end + 1]))
    except (ValueError, ValidationError) as exc:
        raise MalformedAnswer(str(exc)[:300]) from exc


def render_chunk(chunk: ChunkDoc, limit: int = MAX_PROMPT_CHARS) -> str:
    """The chunk as numbered lines the model can cite, rendered as transcript excerpts are (pipeline.steps):
    each command with its description, exit status and informative output, edits with what changed,
    notes and summaries; a long text is trimmed."""
    results = {e.tool_call_id: e for e in chunk.events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    paired = {e.tool_call_id for e in chunk.events if e.role is Role.TOOL_CALL and e.tool_call_id}
    out: list[str] = []
    size = 0
    for e in chunk.events:
        if e.role is Role.TOOL_RESULT and e.tool_call_id in paired:
            continue  # shown with its call
        line = _render(e, results.get(e.tool_call_id or "") if e.role is Role.TOOL_CALL else None)
        if not line:
            continue
        if size + len(line) > limit:
            out.append("[... rest of the chunk omitted ...]")
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def _render(e: EventDoc, result: EventDoc | None) -> str:
    text = render_event(e, result)
    if not text:
        return ""
    if len(text) > MAX_TEXT_CHARS:
        text = text[: MAX_TEXT_CHARS - 1].rstrip() + "…"
    return f"[L{e.line_no}] " + text.replace("\n", "\n    ")


def to_candidate(m: LlmMemory) -> Candidate | None:
    if any(marker in m.content for marker in JUNK):
        return None
    details: dict[str, Any] = {"source": "llm"}
    if m.rationale:
        details["rationale"] = m.rationale
    if m.alternatives:
        details["alternatives"] = m.alternatives
    if m.steps:
        details["steps"] = m.steps
        details.setdefault("success_count", 1)
        details.setdefault("failure_count", 0)
    if m.outcome:
        details["outcome"] = m.outcome
    return Candidate(
        kind=MemoryKind(m.kind),
        content=m.content.strip(),
        title=m.title,
        confidence=m.confidence,
        details=details,
        line_start=m.line_start,
        line_end=m.line_end,
    )


class LlmExtractor:
    def __init__(self, client: LlmClient, fallback: Extractor | None = None) -> None:
        self.client = client
        self.fallback = fallback or RuleExtractor()
        self.name = f"llm:{client.model}"

    def extract(self, chunk: ChunkDoc, ctx: ExtractContext) -> Extraction:
        prompt = f"Project: {ctx.project or '-'}\nAgent: {ctx.agent}\n\n{render_chunk(chunk)}"
        try:
            answer = self._ask(prompt)
        except LlmUnavailable as exc:
            log.warning("LLM unavailable for chunk %s, rules answer now: %s", chunk.chunk_id, exc)
            return self._fallback(chunk, ctx, f"unavailable: {exc}")
        except MalformedAnswer as exc:
            log.warning("LLM answered malformed JSON twice for chunk %s: %s", chunk.chunk_id, exc)
            return self._fallback(chunk, ctx, f"malformed: {exc}")
        candidates = [c for m in answer.memories if (c := to_candidate(m)) is not None]
        return Extraction(candidates=candidates, extractor=self.name)

    def _ask(self, prompt: str) -> LlmAnswer:
        text = self.client.complete(SYSTEM_PROMPT, prompt)
        try:
            return parse_answer(text)
        except MalformedAnswer as first:
            repair = (
                f"{prompt}\n\nYour previous answer was not valid: {first}. "
                "Answer again with only the JSON object."
            )
            return parse_answer(self.client.complete(SYSTEM_PROMPT, repair))

    def _fallback(self, chunk: ChunkDoc, ctx: ExtractContext, note: str) -> Extraction:
        rules = self.fallback.extract(chunk, ctx)
        return Extraction(
            candidates=rules.candidates,
            extractor=f"{rules.extractor}-fallback",
            retry_with_llm=True,
            note=note[:300],
        )


# --- clients ----------------------------------------------------------------------------------
class BedrockConverseClient:
    """Bedrock Converse (`bedrock-runtime`); the boto3 client may be passed in (tests, shared sessions)."""

    def __init__(
        self, model: str, client: Any = None, region: str | None = None, max_tokens: int = 2_000
    ) -> None:
        if client is None:
            import boto3

            client = boto3.client("bedrock-runtime", region_name=region)
        self.model = model
        self._client = client
        self._max_tokens = max_tokens

    def complete(self, system: str, user: str) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            resp = self._client.converse(
                modelId=self.model,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"maxTokens": self._max_tokens, "temperature": 0.0},
            )
        except (ClientError, BotoCoreError) as exc:
            raise LlmUnavailable(str(exc)[:300]) from exc
        blocks = resp.get("output", {}).get("message", {}).get("content", [])
        return "".join(b.get("text", "") for b in blocks)


class AnthropicClient:
    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = "https://api.anthropic.com",
        max_tokens: int = 2_000,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self._http = httpx.Client(
            base_url=base_url,
            timeout=60,
            transport=transport,
            headers={"x-api-key": api_key, "anthropic-version": "2023-06-01"},
        )
        self._max_tokens = max_tokens

    def complete(self, system: str, user: str) -> str:
        body = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "system": system,
            "temperature": 0,
            "messages": [{"role": "user", "content": user}],
        }
        data = _post(self._http, "/v1/messages", body)
        return "".join(b.get("text", "") for b in data.get("content", []) if b.get("type") == "text")


class OpenAICompatibleClient:
    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"), timeout=60, transport=transport, headers=headers
        )

    def complete(self, system: str, user: str) -> str:
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        data = _post(self._http, "/chat/completions", body)
        return data["choices"][0]["message"]["content"] or ""


def _post(http: httpx.Client, path: str, body: dict) -> dict:
    try:
        resp = http.post(path, json=body)
    except httpx.HTTPError as exc:
        raise LlmUnavailable(str(exc)) from exc
    if resp.status_code == 429 or resp.status_code >= 500:
        raise LlmUnavailable(f"{resp.status_code}: {resp.text[:200]}")
    if resp.status_code >= 400:
        raise LlmUnavailable(f"refused {resp.status_code}: {resp.text[:200]}")
    try:
        return resp.json()
    except ValueError as exc:
        raise LlmUnavailable("answer is not JSON") from exc

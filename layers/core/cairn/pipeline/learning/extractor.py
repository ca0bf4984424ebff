"""The Extractor port: one chunk of a transcript in, memory candidates out.

Implementations: `rules.RuleExtractor` (deterministic, zero-LLM, always available) and
`llm.LlmExtractor` (Bedrock Converse, Anthropic or an OpenAI-compatible endpoint), which falls
back to the rules when the model is unreachable or answers with something that is not valid JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cairn.pipeline.models import Candidate, ChunkDoc


@dataclass(frozen=True, slots=True)
class ExtractContext:
    project: str | None
    agent: str
    session_id: str


@dataclass(frozen=True, slots=True)
class Extraction:
    candidates: list[Candidate]
    extractor: str  # which extractor produced them ("rules", "llm:<model>", "rules-fallback")
    retry_with_llm: bool = False  # the LLM was wanted but unavailable: queue this chunk for a later pass
    note: str | None = None


@runtime_checkable
class Extractor(Protocol):
    name: str

    def extract(self, chunk: ChunkDoc, ctx: ExtractContext) -> Extraction: ...

"""Build the pipeline, the upload service and the inline runner for a container (called by bootstrap).

Imports are where they are used: the AWS API builds a container on every cold start (the hook's cold path)
and never runs the inline runner nor extracts, so it does not load them (the rule extractor's patterns,
the inline runner's stages): `DeferredExtractor` loads the configured extractor on its first chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.reading.transcript_lines import TranscriptReader
from cairn.services.uploads import UploadService

if TYPE_CHECKING:
    from cairn.pipeline.learning.extractor import ChunkDoc, ExtractContext, Extraction, Extractor


class DeferredExtractor:
    """An `Extractor` made on its first chunk (its `name` is known before)."""

    def __init__(self, name: str, make: Callable[[], Extractor]) -> None:
        self.name = name
        self._make = make
        self._made: Extractor | None = None

    def extract(self, chunk: ChunkDoc, ctx: ExtractContext) -> Extraction:
        if self._made is None:
            self._made = self._make()
        return self._made.extract(chunk, ctx)


def _rules() -> Extractor:
    from cairn.pipeline.learning.rules import RuleExtractor

    return RuleExtractor()


def build_extractor(
    kind: str = "rules",
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    region: str | None = None,
) -> Extractor:
    """The extractor a deployment asked for: "rules" (default), "bedrock", "anthropic" or "openai"."""
    if kind == "rules":
        return DeferredExtractor("rules", _rules)
    from cairn.pipeline.learning import llm

    if not model:
        raise ValueError(f"the {kind} extractor needs a model")
    if kind == "bedrock":
        return llm.LlmExtractor(llm.BedrockConverseClient(model, region=region))
    if kind == "anthropic" and api_key:
        return llm.LlmExtractor(llm.AnthropicClient(model, api_key, base_url or "https://api.anthropic.com"))
    if kind == "openai" and base_url:
        return llm.LlmExtractor(llm.OpenAICompatibleClient(model, base_url, api_key))
    raise ValueError(f"unknown or incompletely configured extractor {kind!r}")


def attach_pipeline(
    container: Any,
    memory_repo: Any,
    relations: Any,
    index: Any,
    extractor: Extractor | None = None,
    inline: bool = True,
) -> None:
    """Give the container `uploads`, `pipeline` (the stage dependencies) and, locally, `runner`."""
    settings = container.settings
    container.transcripts = TranscriptReader(container.sessions, container.blobs)
    container.uploads = UploadService(
        container.blobs,
        container.sessions,
        settings.max_upload_bytes,
        settings.upload_url_ttl_s,
        audit=container.audit,
    )
    container.pipeline = PipelineDeps(
        blobs=container.blobs,
        sessions=container.sessions,
        memories=container.memories,
        memory_repo=memory_repo,
        relations=relations,
        embedder=container.embedder,
        index=index,
        extractor=extractor or DeferredExtractor("rules", _rules),
        warm_vectors=inline,
    )
    if inline:
        from cairn.pipeline.running.inline import InlinePipelineRunner

        container.runner = InlinePipelineRunner(container.pipeline)
        container.closers = (container.runner.close, *container.closers)
    elif settings.state_machine_arn and settings.bucket:
        from cairn.pipeline.running.step_functions import StepFunctionsPipelineRunner

        container.runner = StepFunctionsPipelineRunner(
            container.pipeline, settings.state_machine_arn, settings.bucket
        )

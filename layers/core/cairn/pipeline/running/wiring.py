"""Build the pipeline, the upload service and the inline runner for a container (called by bootstrap)."""

from __future__ import annotations

from typing import Any

from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.learning.extractor import Extractor
from cairn.pipeline.learning.rules import RuleExtractor
from cairn.pipeline.reading.transcript_lines import TranscriptReader
from cairn.pipeline.running.inline import InlinePipelineRunner
from cairn.services.uploads import UploadService


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
        return RuleExtractor()
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
        extractor=extractor or RuleExtractor(),
        warm_vectors=inline,
    )
    if inline:
        container.runner = InlinePipelineRunner(container.pipeline)
        container.closers = (container.runner.close, *container.closers)
    elif settings.state_machine_arn and settings.bucket:
        from cairn.pipeline.running.step_functions import StepFunctionsPipelineRunner

        container.runner = StepFunctionsPipelineRunner(
            container.pipeline, settings.state_machine_arn, settings.bucket
        )

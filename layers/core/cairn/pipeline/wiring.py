"""Build the pipeline, the upload service and the inline runner for a container (called by bootstrap)."""

from __future__ import annotations

from typing import Any

from cairn.pipeline.extract_rules import RuleExtractor
from cairn.pipeline.extractor import Extractor
from cairn.pipeline.runner import InlinePipelineRunner
from cairn.pipeline.stages import PipelineDeps
from cairn.services.uploads import UploadService


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
    container.uploads = UploadService(
        container.blobs, container.sessions, settings.max_upload_bytes, settings.upload_url_ttl_s
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
    )
    if inline:
        container.runner = InlinePipelineRunner(container.pipeline)
        container.closers = (container.runner.close, *container.closers)

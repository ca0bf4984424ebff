"""The extractor is chosen by settings; a half-configured LLM extractor is refused at start-up."""

import subprocess
import sys

import pytest
from cairn.pipeline.learning.rules import RuleExtractor
from cairn.pipeline.running.wiring import build_extractor
from cairn.settings import Settings

pytestmark = pytest.mark.unit


def test_rules_are_the_default_extractor_loaded_on_its_first_chunk(monkeypatch):
    monkeypatch.delenv("CAIRN_EXTRACTOR", raising=False)
    extractor = build_extractor(Settings().extractor)
    assert extractor.name == "rules"
    assert isinstance(extractor._make(), RuleExtractor)


def test_wiring_a_pipeline_loads_neither_the_rules_nor_the_inline_runner_until_used():
    """The AWS API builds a container on each cold start (the hook's cold path) and never extracts."""
    probe = (
        "import sys; from cairn.pipeline.running.wiring import build_extractor; build_extractor();"
        "print(sorted(m for m in ('cairn.pipeline.learning.rules', 'cairn.pipeline.running.inline')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_llm_extractor_without_a_model_is_refused(monkeypatch):
    monkeypatch.setenv("CAIRN_EXTRACTOR", "anthropic")
    settings = Settings()
    with pytest.raises(ValueError, match="needs a model"):
        build_extractor(settings.extractor, model=settings.extractor_model)


def test_the_llm_api_key_is_not_shown_in_settings_reprs(monkeypatch):
    monkeypatch.setenv("CAIRN_EXTRACTOR_API_KEY", "sk-ant-api03-not-a-real-key")
    assert "sk-ant" not in repr(Settings())

"""The extractor is chosen by settings; a half-configured LLM extractor is refused at start-up."""

import pytest
from cairn.pipeline.learning.rules import RuleExtractor
from cairn.pipeline.running.wiring import build_extractor
from cairn.settings import Settings

pytestmark = pytest.mark.unit


def test_rules_are_the_default_extractor(monkeypatch):
    monkeypatch.delenv("CAIRN_EXTRACTOR", raising=False)
    assert isinstance(build_extractor(Settings().extractor), RuleExtractor)


def test_an_llm_extractor_without_a_model_is_refused(monkeypatch):
    monkeypatch.setenv("CAIRN_EXTRACTOR", "anthropic")
    settings = Settings()
    with pytest.raises(ValueError, match="needs a model"):
        build_extractor(settings.extractor, model=settings.extractor_model)


def test_the_llm_api_key_is_not_shown_in_settings_reprs(monkeypatch):
    monkeypatch.setenv("CAIRN_EXTRACTOR_API_KEY", "sk-ant-api03-not-a-real-key")
    assert "sk-ant" not in repr(Settings())

"""Nothing is embedded twice: a learned session sends each text to the model once (the near-duplicate
check's vector is the one the memory is indexed with), and a reindex with the same model embeds nothing."""

from __future__ import annotations

from collections import Counter

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container, shared_embedder
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.integration.pipeline_helpers import CLAUDE_FIXTURE, learn

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class CountingEmbedder:
    """The real model, counting every text it is given."""

    def __init__(self) -> None:
        self.inner = shared_embedder()
        self.version, self.dimension = self.inner.version, self.inner.dimension
        self.texts: Counter[str] = Counter()
        self.calls: list[int] = []

    def embed(self, texts):
        self.texts.update(texts)
        self.calls.append(len(texts))
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def test_a_learned_session_embeds_each_text_once_and_a_reindex_embeds_nothing(tmp_path):
    model = CountingEmbedder()
    container = build_container(Settings(mode="local", home=tmp_path / "home"), embedder=model)
    try:
        team, _, secret = container.keys.create_team("alpha", "alpha-admin")
        with TestClient(create_app(container)) as api:
            learn(
                container,
                api,
                {"Authorization": f"Bearer {secret}"},
                raw=CLAUDE_FIXTURE.read_bytes(),
                session_id="fe5e1c67-53e7-4862-81ae-d0e013e3270b",
                project="github.com/demo/todo-app",
            )
        stored = list(container.memories._memories.iter_team(team.id))
        assert stored, "the session stored nothing to embed"
        assert [t for t, n in model.texts.items() if n > 1] == []
        # one text per memory: the near-duplicate check embedded what the indexer then reused, not the
        # bare content beside the indexed text
        assert [m.id for m in stored if m.content != m.search_text() and m.content in model.texts] == []
        # and in bulk: what consolidation writes is embedded in one call, not one memory at a time (the
        # reflection and the handoff, written alone, are the only texts sent alone)
        assert model.calls.count(1) <= 2, model.calls

        before = sum(model.texts.values())
        report = container.reindex.rebuild()
        assert report.memories > 0
        assert sum(model.texts.values()) == before
        assert container.reindex.check().total == 0
    finally:
        container.close()

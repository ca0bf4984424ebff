"""The web UI's reindex page shows a model-change reindex's progress: locally the index's build of the new
model (records with the new vectors of all), refreshed while it runs, then the swapped model; only to an
admin of every project (the index is the whole deployment's). The AWS side (the Distributed Map's pages
read from `reindex/` under the API's role) is run by tests/iam."""

from __future__ import annotations

import re

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.domain.models import KeyScope, MemoryKind
from cairn.services.memories import NewMemory
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.fakes.embedders import HashEmbedder

pytestmark = pytest.mark.integration

OLD, NEW = "hash-old-16", "hash-new-16"


class Killed(Exception):
    pass


def _signed_in(app, key: str) -> TestClient:
    client = TestClient(app, follow_redirects=True)
    form = client.get("/ui/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    client.post("/ui/login", data={"csrf": csrf, "key": key})
    return client


def _text(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:dd|span|p|code)>', html, re.S)
    assert found, element_id
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def test_the_reindex_page_shows_a_model_change_build_in_progress_then_the_swapped_model(tmp_path):
    settings = Settings(mode="local", home=tmp_path / "home", ui_secret="u" * 40)
    c = build_container(settings, embedder=HashEmbedder(OLD), previous=())
    try:
        _, _, admin = c.keys.create_team("models", "ops")
        caller = c.keys.authenticate(admin)
        for i in range(60):
            fact = NewMemory(MemoryKind.FACT, f"service {i} on port {9000 + i}", project="p")
            c.memories.remember(caller, fact)
        _, limited = c.keys.create_key(
            caller, "bo", "one project", frozenset({KeyScope.ADMIN}), None, frozenset({"p"})
        )
    finally:
        c.close()

    c = build_container(settings, embedder=HashEmbedder(NEW), previous=[HashEmbedder(OLD)])
    try:
        app = create_app(c)
        client = _signed_in(app, admin)
        page = client.get("/ui/reindex").text
        assert _text(page, "reindex-served") == OLD and "no rebuild is on" in _text(page, "reindex-building")

        committed: list[int] = []

        def killed_after_two(n: int) -> None:
            committed.append(n)
            if len(committed) == 2:
                raise Killed

        with pytest.raises(Killed):  # a run stopped after two committed batches of 20
            c.reindex.rebuild(batch_size=20, progress=killed_after_two)
        page = client.get("/ui/reindex").text
        assert _text(page, "reindex-served") == OLD and _text(page, "reindex-building") == NEW
        assert _text(page, "reindex-done") == "40 of 60 records (66 %)"
        assert '<meta http-equiv="refresh"' in page  # it refreshes itself while the build runs

        assert c.reindex.rebuild().swapped  # resumed to the end
        page = client.get("/ui/reindex").text
        assert _text(page, "reindex-served") == NEW and "no rebuild is on" in _text(page, "reindex-building")
        assert _text(page, "reindex-done") == "60 of 60 records (100 %)"
        assert '<meta http-equiv="refresh"' not in page

        narrow = _signed_in(app, limited)  # an admin of one project: not the deployment's index
        assert narrow.get("/ui/reindex").status_code == 403
        assert "/ui/reindex" not in narrow.get("/ui/").text
        assert "/ui/reindex" in client.get("/ui/").text
    finally:
        c.close()

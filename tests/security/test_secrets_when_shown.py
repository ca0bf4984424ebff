"""Secrets are checked again whenever memory is shown, not only when a transcript is learned: a memory
written through the API (which stores what it is given) or before a redaction rule existed never
hands a credential to an agent through the session-start block, the prompt hook or recall."""

from __future__ import annotations

import json

import pytest
from cairn.api.mcp_tools import ToolServices, tool_specs
from cairn.bootstrap import build_container
from cairn.domain.models import KeyScope, MemoryKind, Principal
from cairn.services.memories import NewMemory
from cairn.settings import Settings

pytestmark = [pytest.mark.security, pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"
TOKEN = "ghp_" + "Zq8" * 12  # the shape of a GitHub personal access token
AWS = "AKIA" + "QX7RTM2K4NB5VW3P"


@pytest.fixture
def store(tmp_path):
    container = build_container(Settings(mode="local", home=tmp_path / "home"))
    team, _, _ = container.keys.create_team("acme", "dev")
    caller = Principal(team.id, "dev", "key-dev", frozenset({KeyScope.WRITE}))
    for kind, text in (
        (MemoryKind.PREFERENCE, f"Always deploy the shop with the token {TOKEN} after the tests pass."),
        (MemoryKind.FACT, f"The deploy bucket is reached with the access key {AWS} from the CI runner."),
    ):
        container.memories.remember(caller, NewMemory(kind=kind, content=text, project=PROJECT))
    yield container, caller
    container.close()


def _secretless(text: str) -> None:
    assert TOKEN not in text and AWS not in text, text
    assert "[REDACTED:" in text, text


def test_no_secret_reaches_the_block_the_prompt_hook_or_recall(store):
    container, caller = store
    _secretless(container.context.assemble(caller, PROJECT, "claude-code", 1_500, consume=False).markdown)
    _secretless(container.context.relevant(caller, PROJECT, "how do we deploy after the tests?").markdown)
    tools = {s.name: s for s in tool_specs(with_context=True)}
    spec = tools["recall"]
    args = spec.args.model_validate({"query": "deploy token access key", "project": PROJECT, "limit": 10})
    answer = spec.run(ToolServices.from_container(container), caller, args)
    assert len(answer["hits"]) == 2
    _secretless(json.dumps(answer))

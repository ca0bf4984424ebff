"""A hand-written LLM stand-in (an LLM is the one dependency with no real local equivalent).

`FakeLlmClient` answers from a script: each call takes the next item, a string (the model's text) or an
exception (raised, e.g. `LlmUnavailable` for an outage). It records every prompt it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable


class FakeLlmClient:
    def __init__(self, script: Iterable[str | Exception] = (), model: str = "fake-model") -> None:
        self.model = model
        self._script = list(script)
        self.calls: list[tuple[str, str]] = []

    def complete(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        if not self._script:
            return json.dumps({"memories": []})
        item = self._script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def answer(*memories: dict) -> str:
    """A well-formed model answer with these memories."""
    return json.dumps({"memories": list(memories)})

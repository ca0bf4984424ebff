"""Which adapters implement which port, for the contract suites.

Each `adapters_<tech>.py` module registers context-manager factories with `@provides(port, name)`;
conftest parametrizes the port's fixture over every registered adapter, so a suite written once runs
over SQLite, DynamoDB-on-moto, S3-on-moto, OpenSearch-on-osmem-server alike.
A factory yields a `Stores` namespace with the adapters that share one backing store, so cross-port
rules (deleting a memory removes its relations) can be asserted too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

PORTS = ("stores", "blob_store", "search_index", "vector_cache", "index_audit", "audit_log")

PROVIDERS: dict[str, dict[str, Callable[[], AbstractContextManager[Any]]]] = defaultdict(dict)


def provides(port: str, name: str):
    assert port in PORTS, port

    def register(factory: Callable[[], AbstractContextManager[Any]]):
        PROVIDERS[port][name] = factory
        return factory

    return register


class Stores:
    """The repositories of one backing store (one SQLite file, one DynamoDB table)."""

    def __init__(self, memories: Any, relations: Any, sessions: Any, teams: Any) -> None:
        self.memories = memories
        self.relations = relations
        self.sessions = sessions
        self.teams = teams

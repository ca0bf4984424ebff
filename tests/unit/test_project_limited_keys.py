"""The rule of keys limited to projects, decided in `Principal` alone: what such a key sees, what it may
write, what it may name; and the key service's part (creating one, and refusing it key management)."""

from __future__ import annotations

import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import sqlite_repositories
from cairn.domain.errors import Forbidden, InvalidInput, OutsideProjects
from cairn.domain.models import KeyScope, Memory, MemoryFilter, MemoryKind, Principal, Scope, Session
from cairn.services.authorizer import authorize
from cairn.services.keys import KeyService

pytestmark = pytest.mark.unit  # the key service tests use SQLite in a temporary directory

A, B = "github.com/acme/alpha", "github.com/acme/bravo"
LIMITED = Principal("team", "dev", "key_1", frozenset({KeyScope.ADMIN}), frozenset({A}))
EVERY = Principal("team", "dev", "key_2", frozenset({KeyScope.ADMIN}))


def memory(project: str | None, scope: Scope = Scope.PROJECT, owner: str | None = None) -> Memory:
    return Memory(
        id="mem_1",
        team_id="team",
        kind=MemoryKind.FACT,
        content="x",
        scope=scope,
        project=project,
        owner=owner,
    )


def test_a_limited_key_sees_its_projects_and_team_wide_memories_but_no_other_project():
    assert LIMITED.sees(memory(A))
    assert LIMITED.sees(memory(None, Scope.TEAM))
    assert not LIMITED.sees(memory(B))
    assert not LIMITED.sees(memory(B, Scope.PERSONAL, owner="dev"))
    assert not LIMITED.sees(memory(A, Scope.PERSONAL, owner="someone else"))
    assert EVERY.sees(memory(B))


def test_confine_adds_the_keys_projects_and_refuses_a_project_outside_them():
    assert LIMITED.confine(MemoryFilter()).projects == frozenset({A})
    assert LIMITED.confine(MemoryFilter(project=A)).project == A
    with pytest.raises(OutsideProjects, match="limited to the projects github.com/acme/alpha"):
        LIMITED.confine(MemoryFilter(project=B))
    assert EVERY.confine(MemoryFilter(project=B)).projects is None


def test_the_confined_filter_admits_what_sees_admits():
    flt = LIMITED.confine(MemoryFilter())
    for m in (memory(A), memory(None, Scope.TEAM), memory(B), memory(B, Scope.PERSONAL, owner="dev")):
        assert flt.admits(m) == LIMITED.sees(m), m


def test_a_limited_key_writes_only_its_projects_never_a_team_wide_memory():
    LIMITED.check_project(A)
    for outside in (B, None):
        with pytest.raises(OutsideProjects):
            LIMITED.check_project(outside)
    EVERY.check_project(None)


def test_sessions_of_another_project_or_of_none_are_unseen_by_a_limited_key():
    def session(project: str | None) -> Session:
        return Session(id="s", team_id="team", project=project, agent="codex")

    assert LIMITED.sees_session(session(A))
    assert not LIMITED.sees_session(session(B)) and not LIMITED.sees_session(session(None))
    assert EVERY.sees_session(session(None))


@pytest.fixture
def keys(tmp_path):
    """The key service over a real SQLite team store (no fake where a real one exists)."""
    db = SqliteDatabase(tmp_path / "cairn.db")
    yield KeyService(sqlite_repositories(db).teams)
    db.close()


def test_a_key_created_with_projects_authenticates_as_a_principal_limited_to_them(keys):
    _, secret = keys.create_key(
        EVERY, "contractor", "ci", frozenset({KeyScope.WRITE}), projects=frozenset({f" {A} "})
    )
    assert keys.authenticate(secret).projects == frozenset({A})
    _, everywhere = keys.create_key(EVERY, "lead", "ci", frozenset({KeyScope.WRITE}))
    assert keys.authenticate(everywhere).projects is None


@pytest.mark.parametrize("projects", [frozenset(), frozenset({" "}), frozenset({"x" * 301})])
def test_an_empty_or_oversized_project_list_is_refused(keys, projects):
    with pytest.raises(InvalidInput):
        keys.create_key(EVERY, "contractor", "ci", frozenset({KeyScope.READ}), projects=projects)


def test_a_limited_admin_key_cannot_manage_keys_so_cannot_widen_itself(keys):
    with pytest.raises(Forbidden, match="for every project"):
        keys.create_key(LIMITED, "me", "wider", frozenset({KeyScope.ADMIN}))
    with pytest.raises(Forbidden):
        keys.list_keys(LIMITED)


def test_the_authorizer_passes_the_keys_projects_in_its_context(keys):
    _, limited = keys.create_key(EVERY, "c", "ci", frozenset({KeyScope.READ}), projects=frozenset({B, A}))
    _, every = keys.create_key(EVERY, "c", "ci", frozenset({KeyScope.READ}))
    arn = "arn:aws:execute-api:eu-west-1:123:api/prod/GET/v1/memories"

    def context(secret: str) -> dict:
        return authorize({"headers": {"Authorization": f"Bearer {secret}"}, "methodArn": arn}, keys)[
            "context"
        ]

    assert context(limited)["projects"] == f'["{A}", "{B}"]'
    assert context(every)["projects"] == ""


def test_a_key_stored_before_keys_had_projects_reads_back_as_reaching_every_project():
    from datetime import UTC, datetime

    from cairn.domain import codec
    from cairn.domain.models import ApiKey

    key = ApiKey(
        "key_1", "team", "dev", "ci", "h" * 64, "cairn_ab", frozenset({KeyScope.READ}), datetime.now(UTC)
    )
    stored = codec.encode_key(key)
    old = {k: v for k, v in stored.items() if k != "projects"}
    assert codec.decode_key(old).projects is None
    assert codec.decode_key({**stored, "projects": [B, A]}).projects == frozenset({A, B})

"""Operator commands: the index is rebuilt from the source of truth; a team is created without a server."""

import os
import subprocess
import sys

import pytest
from cairn.domain.models import MemoryFilter, MemoryKind
from cairn.services.memories import NewMemory

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_lost_index_is_rebuilt_from_the_repository(container, team_a):
    caller = container.keys.authenticate(team_a.admin)
    kept = container.memories.remember(
        caller, NewMemory(MemoryKind.FACT, "Staging database runs PostgreSQL 16 on port 5433", project="p")
    )
    old, new = container.memories.supersede(
        caller,
        kept.id,
        NewMemory(MemoryKind.FACT, "Staging database runs PostgreSQL 17 on port 5433", project="p"),
    )
    flt = MemoryFilter(project="p")
    container.reindex._index.clear_team(team_a.team_id)  # the derived index is lost
    assert container.recall.recall(caller, "staging database port", flt).hits == ()

    report = container.reindex.rebuild()
    assert report.memories == 2

    hits = container.recall.recall(caller, "staging database port", flt).hits
    assert [h.memory.id for h in hits] == [new.id]
    history = container.recall.recall(
        caller, "staging database port", MemoryFilter(project="p", include_superseded=True)
    ).hits
    assert {h.memory.id for h in history} == {old.id, new.id}


def test_admin_create_team_prints_a_working_admin_key(tmp_path):
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    env.pop("CAIRN_MODE", None)
    made = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "admin", "create-team", "platform", "--admin", "ops"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    secret = next(w for w in made.stdout.split() if w.startswith("cairn_"))
    from cairn.bootstrap import build_container
    from cairn.settings import Settings

    c = build_container(Settings(mode="local", home=tmp_path / "home"))
    try:
        who = c.keys.authenticate(secret)
        assert who.member == "ops" and c.teams.get_team(who.team_id).name == "platform"
    finally:
        c.close()


def test_admin_redact_removes_a_string_from_every_team_and_records_the_operator(tmp_path):
    from cairn.bootstrap import build_container
    from cairn.domain.audit import AuditAction
    from cairn.settings import Settings

    home = tmp_path / "home"
    c = build_container(Settings(mode="local", home=home))
    try:
        _, _, secret = c.keys.create_team("platform", "ops")
        caller = c.keys.authenticate(secret)
        leak = "pw=Marmalade-Tractor-77"
        c.memories.remember(caller, NewMemory(MemoryKind.FACT, f"staging login {leak}", project="p"))
    finally:
        c.close()
    env = {**os.environ, "CAIRN_HOME": str(home), "COLUMNS": "250"}
    env.pop("CAIRN_MODE", None)
    done = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "admin", "redact", "--string", leak],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "1 memories" in done.stdout
    c = build_container(Settings(mode="local", home=home))
    try:
        (m,) = c.memories.list(caller, MemoryFilter(project="p")).items
        assert m.content == "staging login [REDACTED]"
        (entry,) = [e for e in c.audit.team(caller).items if e.action is AuditAction.REDACT]
        assert entry.member.startswith("operator:") and entry.key_id == "cli-admin"
    finally:
        c.close()

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

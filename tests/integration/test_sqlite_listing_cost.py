"""A local listing by kind reads what it returns, not the whole team: the context preview lists five kinds
of a project, and a kind the project has none of must not walk every memory of the team to say so.

The cost is SQLite's own count of virtual-machine steps, so the test measures work, never time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cairn.adapters.local.db import SqliteDatabase
from cairn.adapters.local.repositories import SqliteMemoryRepository
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, content_hash

pytestmark = pytest.mark.integration
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _store(tmp_path, facts: int) -> SqliteMemoryRepository:
    repo = SqliteMemoryRepository(SqliteDatabase(tmp_path / f"cairn-{facts}.db"))
    for i in range(facts):
        content = f"fact {i} of another project"
        repo.add(
            Memory(
                id=f"mem_{i:026d}",
                team_id="team_a",
                kind=MemoryKind.FACT,
                content=content,
                project="other",
                created_at=T0 + timedelta(seconds=i),
                content_hash=content_hash(MemoryKind.FACT, content),
            )
        )
    for i in range(3):  # what the listing should find: three decisions of this project
        content = f"decision {i} of this project"
        repo.add(
            Memory(
                id=f"mem_dec{i:023d}",
                team_id="team_a",
                kind=MemoryKind.DECISION,
                content=content,
                project="here",
                created_at=T0 + timedelta(seconds=i),
                content_hash=content_hash(MemoryKind.DECISION, content),
            )
        )
    return repo


def _steps(repo: SqliteMemoryRepository, flt: MemoryFilter, limit: int) -> tuple[int, list[str]]:
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    with repo._db.read() as conn:
        conn.set_progress_handler(count, 1)
    try:
        ids = [m.id for m in repo.list("team_a", flt, limit=limit).items]
    finally:
        with repo._db.read() as conn:
            conn.set_progress_handler(None, 1)
    return steps, ids


@pytest.mark.parametrize(
    "kinds",
    [{MemoryKind.DECISION}, {MemoryKind.PROCEDURE}, {MemoryKind.HANDOFF, MemoryKind.EPISODE}],
    ids=["some-match", "none-match", "two-rare-kinds"],
)
def test_a_listing_by_kind_costs_the_same_in_a_team_ten_times_larger(tmp_path, kinds):
    flt = MemoryFilter(project="here", kinds=frozenset(kinds))
    small_steps, small_ids = _steps(_store(tmp_path, 200), flt, limit=100)
    large_steps, large_ids = _steps(_store(tmp_path, 2_000), flt, limit=100)
    assert small_ids == large_ids  # the same answer, newest first
    if MemoryKind.DECISION in kinds:
        assert small_ids == [f"mem_dec{i:023d}" for i in (2, 1, 0)]
    # before: the outer query walked the team's time index (every row, since fewer than `limit` match)
    assert large_steps < small_steps * 1.5, (small_steps, large_steps)

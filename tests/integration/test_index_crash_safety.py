"""A memory and its index entries are one unit locally: kill -9 mid-write loses neither half alone, and
`cairn reindex --check` / `--repair` (and every start-up) find and mend a store where they disagree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from cairn.bootstrap import build_container
from cairn.domain.models import Memory, MemoryFilter, MemoryKind, content_hash
from cairn.services.memories import NewMemory
from cairn.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# A writer that embeds slowly (as the real model does), so a kill lands inside a write most times.
WRITER = textwrap.dedent(
    """
    import sys, time, hashlib
    from cairn.bootstrap import build_container
    from cairn.domain.models import MemoryKind
    from cairn.services.memories import NewMemory
    from cairn.settings import Settings

    class SlowEmbedder:
        version, dimension = "slow-test-8", 8
        def embed(self, texts):
            time.sleep(0.02 * len(texts))
            return [self.embed_query(t) for t in texts]
        def embed_query(self, text):
            h = hashlib.sha256(text.encode()).digest()
            v = [b - 127.5 for b in h[:8]]
            n = sum(x * x for x in v) ** 0.5
            return [x / n for x in v]

    c = build_container(Settings(mode="local", home=sys.argv[1]), embedder=SlowEmbedder())
    caller = c.keys.authenticate(sys.argv[2])
    for i in range(100000):
        m = c.memories.remember(caller, NewMemory(MemoryKind.FACT, f"crash test fact {i} port {9000 + i}",
                                                  project="p"))
        print(m.id, flush=True)  # acknowledged: the write returned
    """
)


class _Embedder:
    version, dimension = "slow-test-8", 8

    def embed(self, texts):
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        import hashlib

        h = hashlib.sha256(text.encode()).digest()
        v = [b - 127.5 for b in h[:8]]
        n = sum(x * x for x in v) ** 0.5
        return [x / n for x in v]


def _open(home, reconcile: bool = False):
    return build_container(Settings(mode="local", home=home), embedder=_Embedder(), reconcile=reconcile)


def test_kill_9_during_writes_leaves_every_acknowledged_memory_searchable_and_no_drift(tmp_path, monkeypatch):
    home = tmp_path / "home"
    setup = _open(home)
    team, _, secret = setup.keys.create_team("crash", "ops")
    setup.close()
    acknowledged: list[str] = []
    for _ in range(3):  # three kills, each mid-stream
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), secret], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        deadline = time.monotonic() + 60
        wanted = len(acknowledged) + 15
        while len(acknowledged) < wanted and time.monotonic() < deadline:
            line = writer.stdout.readline()
            if line.startswith("mem_"):
                acknowledged.append(line.strip())
        time.sleep(0.013)  # somewhere inside the next write
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        assert len(acknowledged) >= wanted

    c = _open(home)  # no start-up repair: what the crashes left is what is checked
    try:
        assert c.reindex.check().total == 0
        stored = c.memories._memories.get_many(team.id, acknowledged)
        assert set(stored) == set(acknowledged)
        for memory_id in acknowledged[:: max(1, len(acknowledged) // 10)]:
            m = stored[memory_id]
            hits = c.recall.recall(
                c.keys.authenticate(secret), m.content, MemoryFilter(project="p"), limit=5
            ).hits
            assert memory_id in [h.memory.id for h in hits]
    finally:
        c.close()

    # the clustered k-NN of a large team (`search_ivf`, here at test size) is derived from the same
    # tables when a view is built: it finds every acknowledged memory (15 distinct: each writer starts
    # its facts again from 0) by its own vector
    from cairn.adapters.local import search_ivf

    for name, value in {"MIN_ROWS": 10, "EXACT_MAX": 3, "NLIST": 4, "NPROBE": 2}.items():
        monkeypatch.setattr(search_ivf, name, value)
    c = _open(home)
    try:
        index = c.indexer._index
        assert index._view(team.id).centroids is not None
        stored = c.memories._memories.get_many(team.id, acknowledged)
        for memory_id, m in stored.items():
            vector = _Embedder().embed_query(m.search_text())
            found = index.search(team.id, "", vector, MemoryFilter(project="p"), 0, 3).semantic
            assert found[0][0] == memory_id
    finally:
        c.close()


def _orphan_and_unindexed(home, team_id: str) -> tuple[str, str]:
    """A store as an older version could leave it: one memory with no index entry, one entry with no
    memory."""
    c = _open(home)
    try:
        loose = Memory(
            id="mem_00000000000000000000000001",
            team_id=team_id,
            kind=MemoryKind.FACT,
            content="the payments stub listens on port 9100",
            project="p",
            content_hash=content_hash(MemoryKind.FACT, "the payments stub listens on port 9100"),
        )
        c.memories._memories.add(loose)  # the repository alone, as before memory + index were one unit
        ghost = "mem_00000000000000000000000002"  # indexed, never stored (or since deleted)
        c.indexer.index(
            [Memory(id=ghost, team_id=team_id, kind=MemoryKind.FACT, content="gone", project="p")]
        )
    finally:
        c.close()
    return loose.id, ghost


def test_reindex_check_reports_drift_and_repair_mends_it(tmp_path):
    home = tmp_path / "home"
    setup = _open(home)
    team, _, _ = setup.keys.create_team("drift", "ops")
    setup.close()
    loose, ghost = _orphan_and_unindexed(home, team.id)
    env = {**os.environ, "CAIRN_HOME": str(home), "COLUMNS": "200"}
    env.pop("CAIRN_MODE", None)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "cairn.cli.main", "reindex", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    checked = cli("--check")
    assert checked.returncode == 1, checked.stderr
    assert f"missing {loose}" in checked.stdout and f"orphaned {ghost}" in checked.stdout
    repaired = cli("--repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "repaired 2" in repaired.stdout
    clean = cli("--check")
    assert clean.returncode == 0 and "agree" in clean.stdout


def test_start_up_mends_a_memory_a_crash_left_unindexed(tmp_path):
    home = tmp_path / "home"
    setup = _open(home)
    team, _, secret = setup.keys.create_team("startup", "ops")
    setup.close()
    loose, _ = _orphan_and_unindexed(home, team.id)
    c = _open(home, reconcile=True)
    try:
        assert c.reindex.check().total == 0
        caller = c.keys.authenticate(secret)
        hits = c.recall.recall(caller, "payments stub port", MemoryFilter(project="p"))
        assert loose in [h.memory.id for h in hits.hits]
        # re-sending it dedups to the mended memory, which is now found (it used to stay unfindable)
        again = c.memories.remember(
            caller, NewMemory(MemoryKind.FACT, "the payments stub listens on port 9100", project="p")
        )
        assert again.id == loose
        c.memories.remember(caller, NewMemory(MemoryKind.FACT, "one more", project="p"))
        assert c.reindex.check().total == 0
    finally:
        c.close()


def test_without_a_sql_audit_the_check_reads_the_memories_against_what_the_index_lists(tmp_path):
    """As in AWS, where the table and the search engine are apart: drift found from the index's listing."""
    from cairn.services.reindex import ReindexService

    home = tmp_path / "home"
    setup = _open(home)
    team, _, _ = setup.keys.create_team("aws-like", "ops")
    setup.close()
    loose, ghost = _orphan_and_unindexed(home, team.id)
    c = _open(home)
    try:
        generic = ReindexService(c.teams, c.memories._memories, c.indexer._index, c.indexer)
        drift = generic.check().teams[team.id]
        assert (drift.missing, drift.orphaned) == ((loose,), (ghost,))
        generic.repair()
        assert generic.check().total == 0 and c.reindex.check().total == 0
    finally:
        c.close()

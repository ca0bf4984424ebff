"""A model change in local mode: `cairn reindex` builds the new model's vectors beside the served ones,
recall keeps answering from the complete old set (query and vectors from one model) until one swap
serves the new set, writes made meanwhile are caught up, and a run killed with kill -9 resumes without
embedding again what it had committed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from cairn.bootstrap import build_container
from cairn.domain.errors import InvalidInput
from cairn.domain.models import MemoryFilter, MemoryKind
from cairn.services.memories import NewMemory
from cairn.settings import Settings

from tests.fakes.embedders import HashEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OLD, NEW = "hash-old-16", "hash-new-16"
FLT = MemoryFilter(project="p")


def _open(home, embedder=None, previous=(), reconcile=True):
    return build_container(
        Settings(mode="local", home=home),
        embedder=embedder or HashEmbedder(OLD),
        previous=previous,
        reconcile=reconcile,
    )


def _fact(i: int) -> NewMemory:
    return NewMemory(MemoryKind.FACT, f"service {i} listens on port {9000 + i} in zone {i % 7}", project="p")


def _store(home, n: int):
    """A team of `n` memories embedded with the old model."""
    c = _open(home)
    try:
        team, _, secret = c.keys.create_team("models", "ops")
        caller = c.keys.authenticate(secret)
        made = [c.memories.remember(caller, _fact(i)) for i in range(n)]
    finally:
        c.close()
    return team.id, secret, made


class Reader:
    """Polls recall in its own container (as a server would) while a reindex runs, and records every
    answer that is empty, degraded or whose k-NN leg compared vectors of two models."""

    def __init__(self, home, team_id: str, secret: str, memories) -> None:
        self.c = _open(home, HashEmbedder(NEW), previous=[HashEmbedder(OLD)], reconcile=False)
        self.team_id, self.memories = team_id, memories
        self.caller = self.c.keys.authenticate(secret, record_use=False)
        self.polls, self.problems, self.served = 0, [], set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(30)
        self.c.close()

    def _run(self) -> None:
        index = self.c.indexer._index
        i = 0
        while not self._stop.is_set():
            m = self.memories[i % len(self.memories)]
            i += 1
            try:
                answer = self.c.recall.recall(self.caller, m.content, FLT, limit=5)
                vector = self.c.embedder.embed_query(m.search_text())
                knn = index.search(self.team_id, "", vector, FLT, 0, 1).semantic
            except Exception as exc:  # noqa: BLE001 - any failure is what this test looks for
                self.problems.append(f"error: {exc!r}")
                continue
            self.polls += 1
            self.served.add(vector.version)
            if not answer.hits or answer.degraded:
                self.problems.append(f"empty or degraded: {answer.degraded}")
            # the query's model is the vectors': its own text is its nearest, at cosine 1
            if knn and (knn[0][0] != m.id or knn[0][1] < 0.999):
                self.problems.append(f"k-NN compared two models: {knn[0]} for {m.id}")
            time.sleep(0.005)


def test_after_a_model_change_old_vectors_serve_until_the_new_set_is_complete_and_writes_are_caught_up(
    tmp_path,
):
    home = tmp_path / "home"
    team_id, secret, made = _store(home, 120)
    new = HashEmbedder(NEW)
    c = _open(home, new, previous=[HashEmbedder(OLD)])
    index = c.indexer._index
    caller = c.keys.authenticate(secret)
    assert c.reindex.model_change() and index.active_version() == OLD
    during: list = []

    def midway(n: int) -> None:  # after each committed batch the old set is still the one served
        assert index.active_version() == OLD and c.embedder.version == OLD
        if len(during) < 2:  # a write and a delete while the build runs
            during.append(c.memories.remember(caller, _fact(1000 + len(during))))
            c.memories.forget(caller, made[len(during)].id)

    try:
        report = c.reindex.rebuild(batch_size=25, progress=midway)
        assert report.swapped and report.version == NEW
        assert index.active_version() == NEW and c.embedder.version == NEW
        counts = index.version_counts()
        assert counts.building is None and counts.served == counts.docs == 120
        # every memory, those written during the build included, is found by the new model's vector
        for m in [made[0], *made[3:], *during]:
            vector = c.embedder.embed_query(m.search_text())
            assert index.search(team_id, "", vector, FLT, 0, 1).semantic[0][0] == m.id
        assert c.reindex.check().total == 0
        assert c.reindex.status().stamps == {NEW: 120}
        # each text once: the 118 kept, the 2 deleted after their batch, the 2 written in the catch-up pass
        assert len(new.embedded) == len(set(new.embedded)) == 122
    finally:
        c.close()


def test_a_model_change_re_embeds_every_team_so_a_team_filter_is_refused(tmp_path):
    home = tmp_path / "home"
    team_id, _, _ = _store(home, 3)
    c = _open(home, HashEmbedder(NEW), previous=[HashEmbedder(OLD)])
    try:
        with pytest.raises(InvalidInput, match="every team"):
            c.reindex.rebuild([team_id])
        assert c.indexer._index.active_version() == OLD
    finally:
        c.close()


def test_when_the_old_model_cannot_be_loaded_recall_answers_by_keywords_until_the_swap(tmp_path):
    home = tmp_path / "home"
    _, secret, made = _store(home, 10)
    c = _open(home, HashEmbedder(NEW))  # no `previous`: the served vectors' model is gone
    try:
        caller = c.keys.authenticate(secret)
        answer = c.recall.recall(caller, made[0].content, FLT, limit=5)
        assert made[0].id in [h.memory.id for h in answer.hits]
        assert "semantic search unavailable" in (answer.degraded or "")
        c.reindex.rebuild()
        answer = c.recall.recall(caller, made[0].content, FLT, limit=5)
        assert answer.hits[0].memory.id == made[0].id and not answer.degraded
    finally:
        c.close()


RUN = (
    textwrap.dedent(
        """
    import sys
    from cairn.bootstrap import build_container
    from cairn.settings import Settings
    from tests.fakes.embedders import HashEmbedder

    home, log, commits = sys.argv[1:4]
    slow = HashEmbedder(NEW, delay=float(sys.argv[4]), log=log)
    c = build_container(Settings(mode="local", home=home), embedder=slow, previous=[HashEmbedder(OLD)])
    def committed(n):
        with open(commits, "a") as f:
            f.write(f"{n}\\n")
    report = c.reindex.rebuild(batch_size=20, progress=committed)
    print(report.memories, report.resumed_batches, report.swapped, flush=True)
    c.close()
    """
    )
    .replace("NEW", repr(NEW))
    .replace("OLD", repr(OLD))
)


def test_a_reindex_killed_with_kill_9_resumes_without_embedding_its_committed_batches_again(tmp_path):
    home = tmp_path / "home"
    team_id, secret, made = _store(home, 300)
    log, commits = tmp_path / "embedded.jsonl", tmp_path / "commits"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sys.path, os.getcwd()])}

    def run(delay: float) -> subprocess.Popen:
        cmd = [sys.executable, "-c", RUN, str(home), str(log), str(commits), str(delay)]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)

    def lines(path) -> list[str]:
        return path.read_text().splitlines() if path.exists() else []

    with Reader(home, team_id, secret, made) as reader:
        first = run(0.15)
        deadline = time.monotonic() + 30
        while len(lines(commits)) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        reported = len(lines(commits))
        assert 4 <= reported < 15, reported  # killed mid-way
        embedded_first = [json.loads(x) for x in lines(log)]
        log.unlink()

        second = run(0.0)
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 0
        memories, resumed_batches, swapped = out.split()
        committed = int(resumed_batches)  # the kill may land between a commit and its report line
        assert swapped == "True" and committed in (reported, reported + 1)
        time.sleep(0.2)  # the reader also polls the swapped set

    # a batch is embedded, then committed: the first `committed` calls are the committed batches
    done_before = {t for batch in embedded_first[:committed] for t in batch}
    embedded_second = {t for batch in map(json.loads, lines(log)) for t in batch}
    assert len(done_before) == 20 * committed and not done_before & embedded_second
    assert len(done_before | embedded_second) == 300 and int(memories) == 300 - 20 * committed
    assert reader.polls > 20 and reader.problems == []
    assert reader.served == {OLD, NEW}  # it answered before and after the swap
    c = _open(home, HashEmbedder(NEW), previous=[HashEmbedder(OLD)], reconcile=False)
    try:
        counts = c.indexer._index.version_counts()
        assert (counts.active, counts.served, counts.docs, counts.building) == (NEW, 300, 300, None)
    finally:
        c.close()


def test_reindex_status_reports_the_served_and_configured_models_and_the_stamps(tmp_path):
    home = tmp_path / "home"
    _store(home, 5)
    env = {**os.environ, "CAIRN_HOME": str(home), "COLUMNS": "200"}
    env.pop("CAIRN_MODE", None)
    shown = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "reindex", "--status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert f"served vectors: 5 of 5 entries, model {OLD}" in shown.stdout
    assert "model changed: `cairn reindex` re-embeds" in shown.stdout  # the CLI's model is MiniLM
    assert "memories with embedding_version (none yet): 5" in shown.stdout

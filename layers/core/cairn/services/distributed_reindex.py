"""A model-change reindex on a distributed engine (AWS: a Step Functions Distributed Map of Lambda workers).

Three steps, each one Lambda task of the reindex state machine (infra/units/reindex.py):
- `plan`: begins the build of the configured model's index beside the served one (`IndexBuilds.begin`:
  from then on the stream indexer writes every change to both), waits out the indexer's cached look at
  the build, then writes the teams' memory ids to the blob store in pages and a manifest listing the
  pages (the Distributed Map's ItemReader). A plan for a build already on reuses its pages: a failed run
  started again resumes.
- `embed_page`: one worker's item. Reads the page's memories, embeds them with the new model and writes
  the documents the build lacks (never over what the stream indexer wrote meanwhile, which is newer), then
  records the page done; a page recorded done is skipped, so a resumed run does not embed it again.
- `finish`: refuses while any page is not done (the run fails and can be started again), removes from the
  build what was deleted while the pages were embedded, then swaps the alias in one call. Recall reads
  the old complete index until then, the new complete one after.
Every document carries the `embedding_version` of its vector, so the build is queryable by model; after
the swap every record in the store is stamped with it too (`EmbeddingStamps`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice

from cairn.domain.errors import Conflict, InvalidInput
from cairn.domain.models import Memory
from cairn.domain.ports import (
    BlobStore,
    BuildTarget,
    Embedder,
    EmbeddingStamps,
    IndexBuilds,
    MemoryRepository,
    TeamRepository,
)
from cairn.services.indexing import MemoryIndexer
from cairn.services.reindex import ReindexProgress

ROOT = "reindex/"
MANIFEST_KEY = ROOT + "manifest.json"  # fixed: the state machine's ItemReader reads this key
RUN_KEY = ROOT + "run.json"
PAGE_SIZE = 500


@dataclass(frozen=True, slots=True)
class DistributedStatus:
    served: str | None  # the model whose index recall reads
    building: str | None  # the model being built, until the swap
    state: str | None  # building | swapped | None (never run)
    pages: int
    pages_done: int
    records: int
    started_at: str | None = None

    @property
    def fraction(self) -> float:
        return self.pages_done / self.pages if self.pages else 0.0


class DistributedReindex:
    def __init__(
        self,
        teams: TeamRepository,
        memories: MemoryRepository,
        blobs: BlobStore,
        builds: IndexBuilds,
        target: Embedder,
        *,
        page_size: int = PAGE_SIZE,
        settle_s: float = 12.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._teams = teams
        self._memories = memories
        self._blobs = blobs
        self._builds = builds
        self._target = target
        self._page_size = page_size
        # the stream indexer trusts its look at the build for BUILD_CHECK_S: ids are listed after that,
        # so a write is either listed or written to the build by the indexer
        self._settle_s = settle_s
        self._sleep = sleep

    def _run(self) -> dict | None:
        return json.loads(self._blobs.get(RUN_KEY)) if self._blobs.exists(RUN_KEY) else None

    def _prefix(self, version: str) -> str:
        return f"{ROOT}{_slug(version)}/"

    def plan(self) -> dict:
        version = self._target.version
        run = self._run()
        if run and run["version"] == version and run["state"] == "building":
            self._builds.begin(version, self._target.dimension)  # idempotent: the same index again
            return {"version": version, "pages": run["pages"], "records": run["records"], "resumed": True}
        if self._builds.served_version() == version:
            raise Conflict(f"the index already serves model {version!r}: nothing to rebuild")
        self._builds.begin(version, self._target.dimension)
        self._sleep(self._settle_s)
        prefix, pages, records, manifest = self._prefix(version), 0, 0, []
        for key in self._blobs.list(prefix):  # a plan of the same model that never finished
            self._blobs.delete(key)
        for team in self._teams.list_teams():
            ids = (m.id for m in self._memories.iter_team(team.id))
            while chunk := list(islice(ids, self._page_size)):
                key = f"{prefix}pages/{pages:06d}.json"
                self._blobs.put(
                    key, json.dumps({"team_id": team.id, "ids": chunk}).encode(), "application/json"
                )
                manifest.append({"page": key, "version": version})
                pages, records = pages + 1, records + len(chunk)
        self._blobs.put(MANIFEST_KEY, json.dumps(manifest).encode(), "application/json")
        started = datetime.now(UTC).isoformat()
        self._write_run(
            {
                "version": version,
                "pages": pages,
                "records": records,
                "state": "building",
                "started_at": started,
            }
        )
        return {"version": version, "pages": pages, "records": records, "resumed": False}

    def embed_page(self, page_key: str, version: str) -> dict:
        if version != self._target.version:
            raise InvalidInput(
                f"this worker embeds with {self._target.version!r}, the run builds {version!r}"
            )
        if not page_key.startswith(self._prefix(version) + "pages/"):
            raise InvalidInput("not a page of this run", key=page_key)
        done_key = page_key.replace("/pages/", "/done/", 1)
        if self._blobs.exists(done_key):
            return {"page": page_key, "skipped": True, "embedded": 0}
        page = json.loads(self._blobs.get(page_key))
        found = self._memories.get_many(page["team_id"], page["ids"])
        writer = self._builds.writer(self._target.dimension)
        docs = MemoryIndexer(writer, self._target).prepare(list(found.values()))
        writer.create_missing(docs)
        self._blobs.put(done_key, json.dumps({"embedded": len(docs)}).encode(), "application/json")
        return {"page": page_key, "skipped": False, "embedded": len(docs)}

    def finish(self) -> dict:
        run = self._run()
        if run is None or run["state"] != "building":
            raise Conflict("no model-change reindex is on")
        version = run["version"]
        done = len(self._blobs.list(self._prefix(version) + "done/"))
        if done < run["pages"]:
            raise Conflict(
                f"{run['pages'] - done} of {run['pages']} pages are not embedded yet; start the run again"
            )
        self._drop_deleted(version)
        # swapped already by a finish that stopped before stamping: it is run again for the stamp
        if not self._builds.swap(version) and self._builds.served_version() != version:
            raise Conflict(f"no build of {version!r} is on to swap in")
        stamped = self._stamp(version)
        self._write_run(run | {"state": "swapped", "finished_at": datetime.now(UTC).isoformat()})
        return {
            "version": version,
            "pages": run["pages"],
            "records": run["records"],
            "swapped": True,
            "stamped": stamped,
        }

    def _stamp(self, version: str) -> int:
        """Every record stamped with the model its served vector now comes from (queryable in the store,
        not only in the index), after the swap; a finish stopped before the end is run again."""
        if not isinstance(self._memories, EmbeddingStamps):
            return 0
        return sum(self._memories.stamp_embedding_version(t.id, version) for t in self._teams.list_teams())

    def _drop_deleted(self, version: str) -> None:
        """A memory deleted between a worker's read and its write would be back in the build: the build's
        documents are listed against the store once, and those gone are removed."""
        writer = self._builds.writer(self._target.dimension)
        for team in self._teams.list_teams():
            indexed = writer.indexed(team.id)
            stored = {m.id for m in self._memories.iter_team(team.id)}
            gone = sorted(set(indexed) - stored)
            if gone:
                writer.remove(team.id, gone)

    def status(self) -> DistributedStatus:
        run = self._run() or {}
        version = run.get("version")
        done = len(self._blobs.list(self._prefix(version) + "done/")) if version else 0
        return DistributedStatus(
            served=self._builds.served_version(),
            building=self._builds.building_version(),
            state=run.get("state"),
            pages=int(run.get("pages", 0)),
            pages_done=done,
            records=int(run.get("records", 0)),
            started_at=run.get("started_at"),
        )

    def progress(self) -> ReindexProgress:
        status = self.status()
        return ReindexProgress(
            status.served,
            status.building,
            status.pages_done,
            status.pages,
            "pages",
            state=status.state,
            started_at=status.started_at,
        )

    def _write_run(self, run: dict) -> None:
        self._blobs.put(RUN_KEY, json.dumps(run).encode(), "application/json")


class BuildMirror:
    """The stream indexer's second write while a build is on: each change embedded with the build's model
    into the build, so writes made during a rebuild land in both indexes."""

    def __init__(self, builds: IndexBuilds, target: Embedder) -> None:
        self._builds = builds
        self._target = target

    def _writer(self) -> BuildTarget | None:
        """The build's writer, or None while no build is on."""
        building = self._builds.building_version_cached()
        if building is None:
            return None
        if building != self._target.version:
            # a build of a model this process cannot embed with: the run's plan and workers are of
            # the configured model, so this is a deploy in the middle of a run; fail the batch (retried)
            raise RuntimeError(
                f"a build of {building!r} is on; this indexer embeds with {self._target.version!r}"
            )
        return self._builds.writer(self._target.dimension)

    def index(self, memories: Sequence[Memory]) -> None:
        if memories and (writer := self._writer()) is not None:
            writer.upsert(MemoryIndexer(writer, self._target).prepare(list(memories)))

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        if memory_ids and (writer := self._writer()) is not None:
            writer.remove(team_id, list(memory_ids))


def _slug(version: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in version.lower()).strip("-")[:80] or "model"

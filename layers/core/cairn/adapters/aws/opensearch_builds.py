"""Model-change builds of the OpenSearch memories index: a new versioned index built beside the served one,
then one atomic alias swap (`IndexBuilds`, used by `services.distributed_reindex`).

Names, for the served name `N` = `<prefix>-memories` (what every reader and the indexer address):
- `N-<version slug>`: the index holding one model's vectors; its mapping's `_meta.embedding_version` names
  the model, so the served model is read from whatever `N` resolves to.
- `N-building`: an alias on the index being built while a rebuild is on. The stream indexer writes every
  change to it as well (with the new model), so writes made during the rebuild land in both indexes.
The swap is one `_aliases` call: `N` moves to the built index (a first swap replaces the concrete index `N`
of older deployments with the alias, `remove_index`) and `N-building` goes, so a reader sees the old
complete index or the new complete one, never an empty or a mixed one.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from opensearchpy import ConnectionError as OSConnectionError
from opensearchpy import NotFoundError, OpenSearch, TransportError

from cairn.adapters.aws.opensearch import OpenSearchIndex
from cairn.adapters.aws.opensearch_bodies import index_body

log = logging.getLogger(__name__)

BUILD_CHECK_S = 10.0  # how long the indexer trusts its last look at the building alias
# how long the API and the indexer trust their last look at the served model: a query embedded within this
# long after a swap still has the old model; if the dimension changed, its k-NN leg is refused by the
# engine and recall answers by keywords for those seconds (never empty)
SERVED_CHECK_S = 10.0


def version_slug(version: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", version.lower()).strip("-")[:80] or "model"


class OpenSearchIndexBuilds:
    def __init__(self, index: OpenSearchIndex, client: OpenSearch, *, clock: Any = time.monotonic) -> None:
        self._index = index
        self._client = client
        self.served_name = index.index
        self.building_name = f"{index.index}-building"
        self._clock = clock
        self._seen: tuple[float, str | None] | None = None
        self._served: tuple[float, str | None] | None = None

    def _targets(self, name: str) -> list[str]:
        """The concrete indexes a name resolves to (itself when it is an index, none when absent)."""
        try:
            return sorted(self._client.indices.get(index=name).keys())
        except NotFoundError:
            return []

    def _meta_version(self, concrete: str) -> str | None:
        mapping = self._client.indices.get_mapping(index=concrete)[concrete]["mappings"]
        return (mapping.get("_meta") or {}).get("embedding_version")

    def served_version(self) -> str | None:
        """The model of the served index: its mapping's `_meta` (an index made by a build), else the
        `embedding_version` its documents carry (the first index of a deployment, made before builds
        existed, has no `_meta`); None when it is absent or holds no document with a vector yet."""
        try:
            found = self._client.indices.get(index=self.served_name)
        except NotFoundError:
            return None
        concrete = sorted(found)[0]
        meta = (found[concrete].get("mappings") or {}).get("_meta") or {}
        if meta.get("embedding_version"):
            return str(meta["embedding_version"])
        body = {
            "size": 1,
            "_source": ["embedding_version"],
            "query": {"exists": {"field": "embedding_version"}},
        }
        hits = self._client.search(index=concrete, body=body)["hits"]["hits"]
        return str(hits[0]["_source"]["embedding_version"]) if hits else None

    def served_version_cached(self) -> str | None:
        """`served_version`, looked at most every SERVED_CHECK_S (the API's query embedder asks on every
        recall, the stream indexer on every batch)."""
        now = self._clock()
        if self._served is None or now - self._served[0] > SERVED_CHECK_S:
            try:
                self._served = (now, self.served_version())
            except (TransportError, OSConnectionError):
                # the domain is unreachable: recall answers from the table meanwhile; the last look (or
                # none: the configured model) stands until the next one
                log.warning("could not read the served index's model; looking again in %s s", SERVED_CHECK_S)
                self._served = (now, self._served[1] if self._served else None)
        return self._served[1]

    def building_version(self) -> str | None:
        targets = self._targets(self.building_name)
        return self._meta_version(targets[0]) if targets else None

    def building_version_cached(self) -> str | None:
        """`building_version`, looked at most every BUILD_CHECK_S (the indexer asks on every batch)."""
        now = self._clock()
        if self._seen is None or now - self._seen[0] > BUILD_CHECK_S:
            self._seen = (now, self.building_version())
        return self._seen[1]

    def begin(self, version: str, dimension: int) -> str:
        """Create (or find again, on a resumed run) the index of `version` and point `N-building` at it."""
        name = f"{self.served_name}-{version_slug(version)}"
        if not self._client.indices.exists(index=name):
            body = index_body(dimension, self._index.engine, self._index.shards, self._index.replicas)
            body["mappings"]["_meta"] = {"embedding_version": version}
            self._client.indices.create(index=name, body=body)
        actions: list[dict[str, Any]] = [
            {"remove": {"index": old, "alias": self.building_name}}
            for old in self._targets(self.building_name)
            if old != name
        ]
        actions.append({"add": {"index": name, "alias": self.building_name}})
        self._client.indices.update_aliases(body={"actions": actions})
        self._seen = None
        return name

    def writer(self, dimension: int) -> OpenSearchIndex:
        """An index adapter that writes to the build (what workers and the indexer's second write use)."""
        return self._index.addressing(self.building_name, dimension)

    def doc_count(self, name: str) -> int:
        try:
            self._client.indices.refresh(index=name)
            return int(self._client.count(index=name)["count"])
        except NotFoundError:
            return 0

    def swap(self, version: str) -> bool:
        """Point `N` at the built index of `version` and end the build, in one atomic call."""
        built = self._targets(self.building_name)
        if not built or self._meta_version(built[0]) != version:
            return False
        target = built[0]
        served = self._targets(self.served_name)
        actions: list[dict[str, Any]] = []
        if served == [self.served_name]:  # a concrete index of an older deployment: replaced by the alias
            actions.append({"remove_index": {"index": self.served_name}})
        else:
            actions += [
                {"remove": {"index": old, "alias": self.served_name}} for old in served if old != target
            ]
        actions += [
            {"add": {"index": target, "alias": self.served_name}},
            {"remove": {"index": target, "alias": self.building_name}},
        ]
        self._client.indices.update_aliases(body={"actions": actions})
        self._seen = self._served = None
        return True

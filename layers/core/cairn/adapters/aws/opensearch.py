"""OpenSearch adapter of the SearchIndex port: one shared memories index, routed and filtered by team.

Both legs of a recall go out in one `_msearch` round trip; fusing them is the caller's job. The index is
derived data (DynamoDB is the truth), so failures degrade instead of failing the recall: a k-NN leg the
engine rejects (an emulator, a wrong dimension) leaves the BM25 leg with `degraded` saying why, and an
engine that cannot be reached raises `Unavailable` so the caller falls back to a keyword scan.
Documents are routed by team id, which keeps a team on one shard and lets a search touch only it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import NotFoundError, TransportError

from cairn.adapters.aws.opensearch_bodies import (
    TOOL_TEXT_FIELD,
    TOOL_TEXT_MAPPING,
    VECTOR_FIELD,
    build_bulk_body,
    build_knn_query,
    build_lexical_query,
    build_msearch_body,
    build_stored_vectors_query,
    build_tool_text_query,
    doc_id,
    document,
    hits,
    index_template_body,
    knn_hits,
    plain_words,
    query_words,
)
from cairn.domain.errors import Unavailable
from cairn.domain.models import Candidates, IndexedMemory, Memory, MemoryFilter

BULK_TIMEOUT_S = 30


def opensearch_client(
    endpoint: str, region: str | None = None, auth: str = "sigv4", service: str = "es", timeout: float = 5.0
) -> OpenSearch:
    """A client for a domain endpoint: SigV4 with boto3's credentials (`auth="sigv4"`) or none."""
    if auth == "none":
        return OpenSearch(hosts=[endpoint], timeout=timeout)
    if auth != "sigv4":
        raise ValueError("auth must be 'sigv4' or 'none'")
    import boto3
    from opensearchpy import AWSV4SignerAuth, RequestsHttpConnection

    session = boto3.Session()
    return OpenSearch(
        hosts=[endpoint],
        http_auth=AWSV4SignerAuth(session.get_credentials(), region or session.region_name, service),
        use_ssl=endpoint.startswith("https"),
        verify_certs=True,
        connection_class=RequestsHttpConnection,
        timeout=timeout,
    )


def _reason(error: Any) -> str:
    if isinstance(error, dict):
        root = (error.get("root_cause") or [error])[0]
        return f"{root.get('type', 'error')}: {root.get('reason', '')}".strip()
    return str(error)


class OpenSearchIndex:
    supports_knn = True  # the engine executes k-NN; test providers over emulators set it False

    def __init__(
        self,
        client: OpenSearch,
        index_prefix: str,
        dimension: int,
        *,
        engine: str = "lucene",
        refresh: bool | str = False,
        shards: int = 1,
        replicas: int = 0,
    ) -> None:
        self._client = client
        self.client = client  # the model-change builds (opensearch_builds) address the same domain
        self.index = f"{index_prefix}-memories"
        self.dimension = dimension
        self.engine = engine
        self.shards, self.replicas = shards, replicas
        self._refresh = refresh  # True/"wait_for" in tests; the indexer does not wait
        self._ready = False

    def addressing(self, name: str, dimension: int) -> OpenSearchIndex:
        """This adapter writing to and reading from another index or alias that exists already (a
        model-change build, `opensearch_builds`): no template or index is created for it."""
        other = OpenSearchIndex(
            self._client, "", dimension, engine=self.engine, refresh=self._refresh,
            shards=self.shards, replicas=self.replicas,
        )  # fmt: skip
        other.index, other._ready = name, True
        return other

    def ensure_index(self) -> None:
        """Create the index template and the index if absent (idempotent; cheap after the first call)."""
        if self._ready:
            return
        try:
            self._client.indices.put_index_template(
                name=self.index,
                body=index_template_body(
                    f"{self.index}*", self.dimension, self.engine, self.shards, self.replicas
                ),
            )
            if not self._client.indices.exists(index=self.index):
                self._client.indices.create(index=self.index)
            else:  # an index made before a field was added to the template gets it (adding is allowed)
                self._client.indices.put_mapping(
                    index=self.index, body={"properties": {TOOL_TEXT_FIELD: TOOL_TEXT_MAPPING}}
                )
        except TransportError as exc:
            if "resource_already_exists" not in str(exc.error):
                raise self._unavailable(exc) from exc
        except OSConnectionError as exc:
            raise self._unavailable(exc) from exc
        self._ready = True

    def upsert(self, docs: Sequence[IndexedMemory]) -> None:
        if docs:
            self.ensure_index()
            self._write("index", docs)

    def create_missing(self, docs: Sequence[IndexedMemory]) -> None:
        """Write only the documents the index lacks (bulk `create`): a model-change worker must not
        overwrite what the stream indexer wrote meanwhile, which is newer than the worker's read."""
        if docs:
            self._write("create", docs)

    def _write(self, op: str, docs: Sequence[IndexedMemory]) -> None:
        """One bulk request of `op` ("index" replaces, "create" only adds) for the documents."""
        actions = [
            (
                {
                    op: {
                        "_index": self.index,
                        "_id": doc_id(d.memory.team_id, d.memory.id),
                        "routing": d.memory.team_id,
                    }
                },
                document(d.memory, d.vector),
            )
            for d in docs
        ]
        self._bulk(actions)

    def remove(self, team_id: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        actions: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
            ({"delete": {"_index": self.index, "_id": doc_id(team_id, i), "routing": team_id}}, None)
            for i in dict.fromkeys(memory_ids)
        ]
        self._bulk(actions)

    def clear_team(self, team_id: str) -> None:
        try:
            self._client.delete_by_query(
                index=self.index,
                body={"query": {"term": {"team_id": team_id}}},
                params={"routing": team_id, "refresh": "true", "conflicts": "proceed"},
            )
        except NotFoundError:
            return  # no index yet: nothing to clear
        except (TransportError, OSConnectionError) as exc:
            raise self._unavailable(exc) from exc

    def indexed(self, team_id: str) -> dict[str, bool]:
        """`ListableIndex`: the team's documents, 1,000 a page in memory-id order (search_after)."""
        out: dict[str, bool] = {}
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": 1000,
                "query": {"term": {"team_id": team_id}},
                "_source": ["memory_id", "current"],
                "sort": [{"memory_id": "asc"}],
            }
            if after is not None:
                body["search_after"] = after
            try:
                page = self._client.search(index=self.index, body=body, params={"routing": team_id})
            except NotFoundError:
                return out  # no index yet: nothing indexed
            except (TransportError, OSConnectionError) as exc:
                raise self._unavailable(exc) from exc
            docs = page["hits"]["hits"]
            for doc in docs:
                out[doc["_source"]["memory_id"]] = bool(doc["_source"].get("current"))
            if len(docs) < 1000:
                return out
            after = docs[-1]["sort"]

    def stored_vectors(self, memories: Sequence[Memory], model: str) -> dict[str, list[float]]:
        """`StoredVectors`: memory id -> the vector its entry holds, for entries made by `model` from the
        memory's current text (one search per team, by memory id; nothing when the engine is away)."""
        by_team: dict[str, dict[str, Memory]] = {}
        for m in memories:
            by_team.setdefault(m.team_id, {})[m.id] = m
        out: dict[str, list[float]] = {}
        for team_id, wanted in by_team.items():
            body = build_stored_vectors_query(team_id, list(wanted))
            try:
                page = self._client.search(index=self.index, body=body, params={"routing": team_id})
            except (TransportError, OSConnectionError):
                continue  # derived data: whatever is not found is embedded again
            for doc in page["hits"]["hits"]:
                source = doc["_source"]
                memory = wanted.get(source.get("memory_id", ""))
                vector = source.get(VECTOR_FIELD)
                if memory is None or not vector or source.get("embedding_version") != model:
                    continue
                if source.get("text") == plain_words(memory.search_text()):
                    out[memory.id] = [float(x) for x in vector]
        return out

    def search(
        self,
        team_id: str,
        query_text: str,
        query_vector: Sequence[float] | None,
        flt: MemoryFilter,
        k_lexical: int,
        k_semantic: int,
    ) -> Candidates:
        legs: list[str] = []
        searches: list[dict[str, Any]] = []
        degraded: list[str] = []
        if query_words(query_text) and k_lexical > 0:
            legs.append("lexical")
            searches.append(build_lexical_query(team_id, query_text, flt, k_lexical))
        if query_vector is not None and k_semantic > 0:
            # a vector naming its model (`ModelVector`) was made by the served index's model, whose
            # dimension may differ from the configured one while a model-change build is on
            if len(query_vector) != self.dimension and getattr(query_vector, "version", None) is None:
                degraded.append(
                    f"semantic leg skipped: query vector has {len(query_vector)} dimensions, "
                    f"the index {self.dimension}"
                )
            else:
                legs.append("semantic")
                searches.append(build_knn_query(team_id, query_vector, flt, k_semantic))
        if not searches:
            return Candidates((), (), "; ".join(degraded) or None)
        try:
            responses = self._client.msearch(body=build_msearch_body(self.index, searches, routing=team_id))[
                "responses"
            ]
        except (TransportError, OSConnectionError) as exc:
            raise self._unavailable(exc) from exc
        results: dict[str, tuple[tuple[str, float], ...]] = {"lexical": (), "semantic": ()}
        failed = []
        for leg, response in zip(legs, responses, strict=True):
            error = response.get("error")
            if error is None:
                results[leg] = knn_hits(response) if leg == "semantic" else hits(response)
            elif isinstance(error, dict) and error.get("type") == "index_not_found_exception":
                continue  # nothing indexed yet: an empty result, not a degradation
            else:
                failed.append(leg)
                degraded.append(f"{leg} leg failed: {_reason(error)}")
        # a rejected k-NN leg is a known limit (emulator, dimension); a rejected BM25 leg with nothing
        # else to show means the engine cannot serve this team now: let the caller scan instead
        if "lexical" in failed and not results["semantic"]:
            raise Unavailable("search engine rejected the query", reasons=degraded)
        return Candidates(results["lexical"], results["semantic"], "; ".join(degraded) or None)

    def search_tool_text(
        self, team_id: str, query_text: str, flt: MemoryFilter, k: int
    ) -> tuple[tuple[str, float], ...]:
        """`ToolTextSearch`: BM25 over the `tool_text` field alone (explicit recall's own search)."""
        if not query_words(query_text) or k <= 0:
            return ()
        body = build_tool_text_query(team_id, query_text, flt, k)
        try:
            response = self._client.search(index=self.index, body=body, params={"routing": team_id})
        except TransportError as exc:
            if "index_not_found" in str(exc.error):
                return ()  # nothing indexed yet
            raise self._unavailable(exc) from exc
        except OSConnectionError as exc:
            raise self._unavailable(exc) from exc
        return hits(response)

    def _bulk(self, actions: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
        try:
            response = self._client.bulk(
                body=build_bulk_body(actions),
                # writes are off the request path (the indexer, an import): a loaded domain gets longer
                # than a query's few seconds before the batch is retried
                params={"refresh": _flag(self._refresh), "request_timeout": BULK_TIMEOUT_S},
            )
        except (TransportError, OSConnectionError) as exc:
            raise self._unavailable(exc) from exc
        if response.get("errors"):
            failures = [
                item
                for entry in response["items"]
                for op, item in entry.items()
                if item.get("error")
                and not (op == "delete" and item.get("status") == 404)
                and not (op == "create" and item.get("status") == 409)  # there already: kept
            ]
            if failures:
                raise Unavailable(
                    "search index rejected documents",
                    count=len(failures),
                    first=_reason(failures[0]["error"]),
                )

    def _unavailable(self, exc: Exception) -> Unavailable:
        return Unavailable(
            "search engine unavailable", index=self.index, cause=f"{type(exc).__name__}: {exc}"
        )


def _flag(value: bool | str) -> str:
    return value if isinstance(value, str) else str(value).lower()

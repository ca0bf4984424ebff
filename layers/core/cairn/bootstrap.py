"""Composition root: the only module that reads settings and picks adapters (local or AWS).

`build_container(settings)` returns the services wired for the mode; the API, the CLI, the Lambda entry
points and the tests all get their services from here. Heavy objects (the ONNX embedder, SDK clients)
are created once per process and shared, because Lambda keeps the process warm between invocations.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from cairn.atomic import write_atomic
from cairn.domain.ports import (
    AuditLog,
    BlobStore,
    Embedder,
    IndexAudit,
    MemoryRepository,
    Metrics,
    NoMetrics,
    NoTeamQuotas,
    RelationRepository,
    SearchIndex,
    SessionRepository,
    StoredVectors,
    TeamQuotas,
    TeamRepository,
    TransferLauncher,
    VectorCache,
)
from cairn.search import language, vocabulary
from cairn.services.audit import AuditTrail
from cairn.services.history import RedactionService
from cairn.services.indexing import CarriedVectorsOnly, MemoryIndexer
from cairn.services.keys import KeyService
from cairn.services.memories import MemoryService
from cairn.services.portability import PortabilityService
from cairn.services.recall import RecallService
from cairn.services.reindex import DriftReport, ReindexProgress, ReindexService
from cairn.services.transfers import TransferService
from cairn.services.uploads import SWEEP_HORIZON, UploadService
from cairn.settings import Settings

if TYPE_CHECKING:
    # only named in annotations: these load where they are used, so the authorizer, sweep and indexer
    # Lambdas never import the pipeline or the context service (~0.3 s), nor local start-up the aws adapters
    from contextlib import AbstractContextManager

    from cairn.adapters.aws.opensearch import OpenSearchIndex
    from cairn.adapters.aws.streams import DynamoStreamIndexer
    from cairn.adapters.local.search import SqliteSearchIndex
    from cairn.pipeline.deps import PipelineDeps
    from cairn.pipeline.reading.transcript_lines import TranscriptReader
    from cairn.pipeline.running.inline import InlinePipelineRunner
    from cairn.pipeline.running.step_functions import StepFunctionsPipelineRunner
    from cairn.services.context import ContextService
    from cairn.services.digest import DigestService
    from cairn.services.distributed_reindex import DistributedReindex

log = logging.getLogger(__name__)


@dataclass
class Container:
    """The services of one mode. The fields after `reindex` are filled in by `_assemble` and
    `attach_pipeline` (None until then, or where a mode has none)."""

    settings: Settings
    memories: MemoryService
    recall: RecallService
    keys: KeyService
    portability: PortabilityService
    sessions: SessionRepository
    teams: TeamRepository
    blobs: BlobStore
    embedder: Embedder
    reindex: ReindexService
    audit: AuditTrail = field(default_factory=AuditTrail)
    history: RedactionService | None = None
    context: ContextService | None = None
    digest: DigestService | None = None
    transfers: TransferService | None = None  # whole-team export/import staged in the blob store
    uploads: UploadService | None = None
    pipeline: PipelineDeps | None = None
    # inline in local mode; Step Functions in AWS where a state machine is configured; None: no pipeline
    runner: InlinePipelineRunner | StepFunctionsPipelineRunner | None = None
    indexer: MemoryIndexer | None = None  # the indexer Lambda uses it
    transcripts: TranscriptReader | None = None
    ui_secret: bytes | None = None  # signs web UI session cookies; None turns web sign-in off
    # loads the model and the search views ahead of the first recall (local servers)
    warm: Callable[[], None] | None = None
    # fails recent sessions whose upload never came, returns how many; a local server runs it every 15 min
    sweep: Callable[[], int] | None = None
    # the scheduled dream pass over every project with news (its totals); a local server runs it every
    # `settings.dream_every_s` seconds; None when that is 0
    dream: Callable[[], dict[str, int]] | None = None
    # a model-change reindex's progress for the UI: the local index's build, or in AWS the Distributed
    # Map's pages (read from `reindex/` in the bucket); None when none has run
    reindex_progress: Callable[[], ReindexProgress | None] | None = None
    closers: tuple[Callable[[], None], ...] = ()

    def close(self) -> None:
        for closer in self.closers:
            closer()


@cache
def shared_embedder() -> Embedder:
    from cairn.adapters.embedding import OnnxMiniLmEmbedder

    return OnnxMiniLmEmbedder()


def bundled_embedders() -> tuple[Embedder, ...]:
    """Every model this package can load (each loads its weights on first use only). After a model
    change the index keeps serving the old model's vectors until the rebuild swaps, so queries must
    still be embedded with the old model: a model that ships here can do that."""
    return (shared_embedder(),)


def _loadable(target: Embedder, previous: Sequence[Embedder] | None) -> tuple[Embedder, ...]:
    """The models besides `target` that can embed a query for the served index: the caller's, or by
    default every bundled model."""
    others = bundled_embedders() if previous is None else tuple(previous)
    return tuple(m for m in others if m.version != target.version)


def build_container(
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    reconcile: bool = True,
    previous: Sequence[Embedder] | None = None,
) -> Container:
    """`reconcile=False` leaves a local store's index drift for `cairn reindex --check` to report.
    `previous`: older models this process can still load (None: every bundled model), so that after a
    model change queries are embedded with the model of the index actually served (locally the active
    vector set, in AWS the alias's current index) until the rebuild swaps, in both modes."""
    settings = settings or Settings()
    embedder = embedder or shared_embedder()
    if settings.mode == "aws":
        return _build_aws(settings, embedder, _loadable(embedder, previous))
    return _build_local(settings, embedder, reconcile, _loadable(embedder, previous))


def _build_local(
    settings: Settings, embedder: Embedder, reconcile: bool = True, previous: Sequence[Embedder] = ()
) -> Container:
    from cairn.adapters.cached_embedder import CachingEmbedder
    from cairn.adapters.local.blobs import FilesystemBlobStore
    from cairn.adapters.local.db import SqliteDatabase
    from cairn.adapters.local.index_audit import SqliteIndexAudit
    from cairn.adapters.local.repositories import sqlite_repositories
    from cairn.adapters.local.search import SqliteSearchIndex
    from cairn.adapters.serving_embedder import ServingEmbedder

    settings.home.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase(settings.db_path)
    index = SqliteSearchIndex(db)
    repos = sqlite_repositories(db)
    container = _assemble(
        settings,
        # the index keeps every vector under its model and text: nothing is ever embedded twice; and
        # queries and writes use the model whose vectors it serves (the old one until a reindex swaps)
        CachingEmbedder(ServingEmbedder(embedder, index.active_version, previous), index),
        memories=repos.memories,
        relations=repos.relations,
        sessions=repos.sessions,
        teams=repos.teams,
        audit_log=repos.audit,
        index=index,
        blobs=FilesystemBlobStore(settings.blob_root, _local_signing_key(settings), settings.base_url),
        index_on_write=True,
        closers=(db.close,),
        unit=db.transaction,  # a memory and its index entries commit as one
        audit=SqliteIndexAudit(db),
        target=CachingEmbedder(embedder, index),
        compact=index.compact,  # a redaction leaves no old bytes in the file
    )
    container.reindex_progress = container.reindex.progress
    # a store written by an older version (memory and index were two commits) may hold memories a
    # crash left unindexed: mend that before serving
    container.warm = lambda: _warm_local(container, index)
    drift = container.reindex.repair() if reconcile else None
    if drift is not None and drift.total:
        log.warning("search index drift repaired at start-up: %s", _describe(drift))
    container.ui_secret = _ui_secret(settings) or _private_key_file(settings, "ui-session.key")
    # sessions granted an upload that never came would stay `received` forever: fail them, with why (all
    # of them at start-up; a running server sweeps the recent ones again on a schedule, as AWS does)
    team_ids = [team.id for team in container.teams.list_teams()]
    container.uploads.record_stored_parts(team_ids)  # a crash between storing a part and recording it
    container.uploads.expire_unsent(team_ids)
    container.sweep = lambda: container.uploads.expire_unsent(
        [team.id for team in container.teams.list_teams()], horizon=SWEEP_HORIZON
    )
    if settings.dream_every_s > 0:
        from cairn.pipeline.stages.dream import dream_all

        container.dream = lambda: dream_all(container.pipeline, container.teams)  # type: ignore[arg-type]
    return container


def _assemble(
    settings: Settings,
    embedder: Embedder,
    *,
    memories: MemoryRepository,
    relations: RelationRepository,
    sessions: SessionRepository,
    teams: TeamRepository,
    audit_log: AuditLog,
    index: SearchIndex,
    blobs: BlobStore,
    index_on_write: bool,
    closers: tuple[Callable[[], None], ...],
    unit: Callable[[], AbstractContextManager[Any]] | None = None,
    audit: IndexAudit | None = None,
    quotas: TeamQuotas | None = None,
    target: Embedder | None = None,
    compact: Callable[[], None] | None = None,
    launcher: TransferLauncher | None = None,
) -> Container:
    """The services over a set of adapters. Locally every write is indexed inline; in AWS the
    DynamoDB stream feeds the indexer Lambda, so the services write only to the table."""
    from cairn.adapters.metered import MeteredSessionRepository
    from cairn.pipeline.running.wiring import attach_pipeline, build_extractor
    from cairn.services.context import ContextService
    from cairn.services.digest import DigestService

    metrics = build_metrics(settings)
    trail = AuditTrail(audit_log)
    sessions = MeteredSessionRepository(sessions, metrics)
    indexer = MemoryIndexer(index, embedder)
    on_write = indexer if index_on_write else None
    # locally the query embedding overlaps the BM25 query (two index calls); in AWS both legs go to
    # OpenSearch in one _msearch round trip, so the embedding comes first
    recall = RecallService(
        memories,
        index,
        embedder,
        relations,
        overlap_embedding=settings.mode == "local",
        metrics=metrics,
    )
    container = Container(
        settings=settings,
        memories=MemoryService(memories, relations, on_write, unit=unit, metrics=metrics, audit=trail),
        recall=recall,
        keys=KeyService(teams, quotas=quotas, audit=trail),
        portability=PortabilityService(
            memories,
            relations,
            sessions,
            # in AWS the table's stream indexes; an import writes only the vectors it carried
            on_write or CarriedVectorsOnly(index),
            unit=unit,
            vectors=index if isinstance(index, VectorCache | StoredVectors) else None,
            model=embedder.version,
            audit=trail,
        ),
        sessions=sessions,
        teams=teams,
        blobs=blobs,
        embedder=embedder,
        reindex=ReindexService(teams, memories, index, indexer, audit, target=target),
        audit=trail,
        # redaction re-indexes what it changes itself in both modes: the index is clean when it returns
        history=RedactionService(memories, sessions, blobs, indexer, trail, unit=unit, compact=compact),
        # the block orders each section by the sessions that confirm a memory (project_block's default):
        # the dream pass's `salience` fades by wall-clock age, and cost the multi-session block 3 -> 1 of 20
        context=ContextService(memories, recall, sessions, audit=trail),
        digest=DigestService(memories, sessions),
        indexer=indexer,
        closers=closers,
    )
    container.transfers = TransferService(
        blobs,
        container.portability,
        # AWS: the worker Lambda (none configured: transfers are refused with the reason); locally a thread
        launcher if settings.mode == "aws" else _thread_launcher(container),
        url_ttl_s=settings.upload_url_ttl_s * 3,
        audit=trail,
    )
    extractor = build_extractor(
        settings.extractor,
        model=settings.extractor_model,
        base_url=settings.extractor_base_url,
        api_key=settings.extractor_api_key.get_secret_value() if settings.extractor_api_key else None,
        region=settings.aws_region,
    )
    attach_pipeline(
        container, memories, relations, index, extractor=extractor, inline=settings.mode == "local"
    )
    return container


def _thread_launcher(container: Container) -> TransferLauncher:
    from cairn.adapters.local.transfer_thread import ThreadTransferLauncher

    return ThreadTransferLauncher(lambda team, transfer: container.transfers.run(team, transfer))  # type: ignore[union-attr]


def build_metrics(settings: Settings) -> Metrics:
    """EMF through Powertools in Lambda (the handler's `log_metrics` flushes them), nothing locally:
    cairn's core stays importable without Powertools."""
    if settings.metrics == "emf":
        from cairn.adapters.aws.powertools import PowertoolsMetrics

        return PowertoolsMetrics(environment=settings.env)
    return NoMetrics()


AHEAD_OF_REQUESTS = frozenset({"snap-start", "provisioned-concurrency"})


def prime_at_init(container: Container) -> bool:
    """Load the query model during a Lambda init that runs ahead of any request: SnapStart snapshots the
    process after init, so the loaded ONNX session ships in the snapshot and a restored copy's first recall
    skips the load (~0.35 s); a provisioned instance likewise. An on-demand init keeps it lazy: there the
    load costs the same at init or on the first request, and routes that never embed should not pay it.
    Only the bundled model, never the served-model lookup: no OpenSearch call (and so no connection
    that a restore would leave stale) at init. Returns whether it loaded."""
    if container.settings.lambda_initialization_type not in AHEAD_OF_REQUESTS:
        return False
    shared_embedder().embed_query("warm up")  # creates the session and runs the graph once
    vocabulary.load()  # the word list recall's abstention reads
    language.load()  # and the model that says which language a question is in
    return True


def _warm_local(container: Container, index: SqliteSearchIndex) -> None:
    """The ONNX session and every team's search view, made before anyone asks: at 100k records the
    first recall after a start otherwise pays ~4 s building the view, and ~0.2 s creating the session."""
    try:
        container.embedder.embed_query("warm up")
    except LookupError:  # the served vectors' model is not loadable here: recall is by keywords
        log.warning("the search index serves a model this process cannot load; run `cairn reindex`")
    vocabulary.load()
    language.load()
    for team in container.teams.list_teams():
        index.warm(team.id)


def _describe(report: DriftReport) -> str:
    return "; ".join(
        f"team {team}: {len(d.missing)} missing, {len(d.orphaned)} orphaned, {len(d.stale)} stale"
        for team, d in report.teams.items()
        if d.total
    )


def _local_signing_key(settings: Settings) -> bytes:
    """Signs local upload URLs; made once per data dir and kept private to the user."""
    return _private_key_file(settings, "upload-signing.key")


def _ui_secret(settings: Settings) -> bytes | None:
    """CAIRN_UI_SECRET signs web UI sessions (required in AWS, where no local file can be shared)."""
    value = settings.ui_secret.get_secret_value() if settings.ui_secret else ""
    return value.encode() if len(value) >= 32 else None


def _opensearch_index(settings: Settings) -> OpenSearchIndex:
    from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client

    client = opensearch_client(
        settings.opensearch_endpoint,
        settings.aws_region,
        auth=settings.opensearch_auth,
        timeout=settings.opensearch_timeout_s,
    )
    return OpenSearchIndex(
        client,
        settings.opensearch_index_prefix,
        settings.embedding_dim,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


def _ui_secret_from_aws(settings: Settings) -> bytes | None:
    """The stack's generated UI secret (CAIRN_UI_SECRET_ARN); None, and web sign-in off with its
    reason, when it cannot be read: the API itself must keep serving."""
    if not settings.ui_secret_arn:
        return None
    import boto3
    from botocore.config import Config

    # bounded: an unreachable endpoint must not hold the API's cold start for a minute of retries
    quick = Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 2})
    try:
        client = boto3.client("secretsmanager", config=quick)
        value = client.get_secret_value(SecretId=settings.ui_secret_arn)
    except Exception:  # any AWS failure: the UI says "not configured", the API serves on
        log.warning("web UI secret %s could not be read; web sign-in is off", settings.ui_secret_arn)
        return None
    secret = str(value.get("SecretString") or "")
    return secret.encode() if len(secret) >= 32 else None


def _private_key_file(settings: Settings, name: str) -> bytes:
    path = settings.home / name
    if not path.exists():
        write_atomic(path, secrets.token_bytes(32), mode=0o600)
    return path.read_bytes()


def _build_aws(settings: Settings, embedder: Embedder, previous: Sequence[Embedder] = ()) -> Container:
    from cairn.adapters.aws.apigateway_quotas import ApiGatewayTeamQuotas
    from cairn.adapters.aws.dynamo import dynamo_repositories
    from cairn.adapters.aws.s3 import S3BlobStore

    missing = [n for n in ("table_name", "bucket", "opensearch_endpoint") if not getattr(settings, n)]
    if missing:
        raise RuntimeError(f"aws mode needs CAIRN_{', CAIRN_'.join(m.upper() for m in missing)}")
    repos = dynamo_repositories(
        settings.table_name, host=settings.dynamo_endpoint, region=settings.aws_region
    )
    index = _opensearch_index(settings)
    container = _assemble(
        settings,
        # queries follow the alias's current index: the old model until a model-change build swaps
        _serving(index, embedder, previous),
        memories=repos.memories,
        relations=repos.relations,
        sessions=repos.sessions,
        teams=repos.teams,
        audit_log=repos.audit,
        index=index,  # RecallService falls back to keywords over the table when OpenSearch is down
        blobs=S3BlobStore(settings.bucket, kms_key_id=settings.kms_key_id),
        index_on_write=False,
        closers=(),
        # without the stack's usage plan id (LocalStack, moto, an operator who did not set it) teams get
        # no key; `cairn admin create-team` says so, and `cairn admin sync-quotas` mends it later
        quotas=ApiGatewayTeamQuotas(
            settings.usage_plan_id, f"cairn-{settings.env}", region=settings.aws_region
        )
        if settings.usage_plan_id
        else NoTeamQuotas(),
        launcher=_lambda_launcher(settings),
    )
    container.ui_secret = _ui_secret(settings) or _ui_secret_from_aws(settings)
    container.reindex_progress = lambda: _distributed_progress(container, repos.memories, index, embedder)
    return container


def _distributed_progress(
    container: Container, memories: MemoryRepository, index: OpenSearchIndex, target: Embedder
) -> ReindexProgress:
    """What the reindex state machine's run record and done markers under `reindex/` say (the API
    reads them, granted GetObject on the record and a listing of done markers alone)."""
    from opensearchpy import ConnectionError as OSConnectionError
    from opensearchpy import TransportError

    from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
    from cairn.domain.errors import Unavailable
    from cairn.services.distributed_reindex import DistributedReindex

    builds = OpenSearchIndexBuilds(index, index.client)
    try:
        return DistributedReindex(container.teams, memories, container.blobs, builds, target).progress()
    except (TransportError, OSConnectionError) as exc:  # the page says so (503), not a traceback
        raise Unavailable("search engine unavailable", cause=type(exc).__name__) from exc


def _serving(index: OpenSearchIndex, embedder: Embedder, previous: Sequence[Embedder]) -> Embedder:
    """`embedder`, or while the served index holds another model's vectors, that model (a query of a
    model this process cannot load fails, and recall answers by keywords)."""
    from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
    from cairn.adapters.serving_embedder import ServingEmbedder

    builds = OpenSearchIndexBuilds(index, index.client)
    return ServingEmbedder(embedder, builds.served_version_cached, previous)


def _lambda_launcher(settings: Settings) -> TransferLauncher | None:
    """The transfer worker Lambda (CAIRN_TRANSFER_FUNCTION, set by the stack on the API)."""
    if not settings.transfer_function:
        return None
    from cairn.adapters.aws.lambda_launcher import LambdaTransferLauncher

    return LambdaTransferLauncher(settings.transfer_function)


def build_key_service(settings: Settings | None = None) -> KeyService:
    """Just the key check, over the table alone (the authorizer Lambda is granted nothing else)."""
    from cairn.adapters.aws.dynamo import dynamo_repositories

    settings = settings or Settings()
    if not settings.table_name:
        raise RuntimeError("the authorizer needs CAIRN_TABLE_NAME")
    repos = dynamo_repositories(
        settings.table_name, host=settings.dynamo_endpoint, region=settings.aws_region
    )
    return KeyService(repos.teams)


def build_upload_sweep(settings: Settings | None = None) -> Callable[[], int]:
    """The scheduled sweep Lambda's work, over the table and a listing of the bucket alone: sessions
    granted an upload that never came are failed with the reason; returns how many (`UnsentUploads`)."""
    from cairn.adapters.aws.dynamo import dynamo_repositories
    from cairn.adapters.aws.s3 import S3BlobStore
    from cairn.services.uploads import UnsentUploads

    settings = settings or Settings()
    if not settings.table_name or not settings.bucket:
        raise RuntimeError("the upload sweep needs CAIRN_TABLE_NAME and CAIRN_BUCKET")
    repos = dynamo_repositories(
        settings.table_name, host=settings.dynamo_endpoint, region=settings.aws_region
    )
    unsent = UnsentUploads(repos.sessions, S3BlobStore(settings.bucket), settings.upload_url_ttl_s)

    def sweep() -> int:
        return unsent.expire([team.id for team in repos.teams.list_teams()], horizon=SWEEP_HORIZON)

    return sweep


def build_stream_indexer(
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    previous: Sequence[Embedder] | None = None,
) -> DynamoStreamIndexer:
    """The indexer Lambda's work: DynamoDB stream records -> embeddings -> OpenSearch."""
    from cairn.adapters.aws.streams import DynamoStreamIndexer

    settings = settings or Settings()
    if not settings.opensearch_endpoint:
        raise RuntimeError("the indexer needs CAIRN_OPENSEARCH_ENDPOINT")
    from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
    from cairn.services.distributed_reindex import BuildMirror

    index = _opensearch_index(settings)
    embedder = embedder or shared_embedder()
    mirror = BuildMirror(OpenSearchIndexBuilds(index, index.client), embedder)
    # the served index gets vectors of its own model (the old one while a build is on), the build the new
    served = _serving(index, embedder, _loadable(embedder, previous))
    return DynamoStreamIndexer(MemoryIndexer(index, served), index, mirror)


def build_distributed_reindex(
    settings: Settings | None = None, embedder: Embedder | None = None, **options: Any
) -> DistributedReindex:
    """The reindex state machine's tasks (plan, embed a page, finish) over the table, bucket and domain."""
    from cairn.adapters.aws.dynamo import dynamo_repositories
    from cairn.adapters.aws.opensearch_builds import OpenSearchIndexBuilds
    from cairn.adapters.aws.s3 import S3BlobStore
    from cairn.services.distributed_reindex import DistributedReindex

    settings = settings or Settings()
    missing = [n for n in ("table_name", "bucket", "opensearch_endpoint") if not getattr(settings, n)]
    if missing:
        raise RuntimeError(f"the reindex needs CAIRN_{', CAIRN_'.join(m.upper() for m in missing)}")
    repos = dynamo_repositories(
        settings.table_name, host=settings.dynamo_endpoint, region=settings.aws_region
    )
    index = _opensearch_index(settings)
    return DistributedReindex(
        repos.teams,
        repos.memories,
        S3BlobStore(settings.bucket, kms_key_id=settings.kms_key_id),
        OpenSearchIndexBuilds(index, index.client),
        embedder or shared_embedder(),
        **({"settle_s": settings.reindex_settle_s} | options),
    )

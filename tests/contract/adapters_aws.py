"""AWS adapters for the contract suites: DynamoDB and S3 on a moto server, OpenSearch on osmem-server.

One moto server and one osmem-server per test process, both on 127.0.0.1 and started on first use; each
test gets its own table, bucket or osmem clone, so tests never see each other's data. Server mode (not
in-process `mock_aws`) because httpx uploads to presigned URLs must reach it too.
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from botocore.config import Config
from cairn.adapters.aws.dynamo import (
    DynamoAuditLog,
    DynamoMemoryRepository,
    DynamoRelationRepository,
    DynamoSessionRepository,
    DynamoTable,
    DynamoTeamRepository,
    create_table,
)
from cairn.adapters.aws.opensearch import OpenSearchIndex, opensearch_client
from cairn.adapters.aws.s3 import S3BlobStore

from tests.contract.registry import Stores, provides

REGION = "us-east-1"
CREDENTIALS = ("testing", "testing")
SEARCH_DIMENSION = 8  # the dimension of the search contract suite's vectors (`DIM` there)

_lock = threading.Lock()
_servers: dict[str, object] = {}


def moto_endpoint() -> str:
    """The URL of this process's moto server, started on first use and stopped at exit."""
    with _lock:
        if "moto" not in _servers:
            from moto.server import ThreadedMotoServer

            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
            atexit.register(server.stop)
            host, port = server.get_host_and_port()
            _servers["moto"] = f"http://{host}:{port}"
        return str(_servers["moto"])


def osmem_server():
    with _lock:
        if "osmem" not in _servers:
            from osmem_server import OsmemServer

            server = OsmemServer.start(freeze=False, japanese=False, addr="127.0.0.1:0")
            atexit.register(server.close)
            _servers["osmem"] = server
        return _servers["osmem"]


def aws_client(service: str):
    return boto3.client(
        service,
        endpoint_url=moto_endpoint(),
        region_name=REGION,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
        config=Config(s3={"addressing_style": "path"}),
    )


def new_table() -> DynamoTable:
    name = f"cairn-{uuid.uuid4().hex[:12]}"
    create_table(name, aws_client("dynamodb"))
    return DynamoTable.bind(name, host=moto_endpoint(), region=REGION, credentials=CREDENTIALS)


def drop_table(table: DynamoTable) -> None:
    aws_client("dynamodb").delete_table(TableName=table.name)


@provides("stores", "dynamo-moto")
@contextmanager
def dynamo_stores() -> Iterator[Stores]:
    table = new_table()
    try:
        yield Stores(
            memories=DynamoMemoryRepository(table),
            relations=DynamoRelationRepository(table),
            sessions=DynamoSessionRepository(table),
            teams=DynamoTeamRepository(table),
        )
    finally:
        drop_table(table)


@provides("audit_log", "dynamo-moto")
@contextmanager
def dynamo_audit_log() -> Iterator[DynamoAuditLog]:
    table = new_table()
    try:
        yield DynamoAuditLog(table, page_size=3)  # small pages: paging is exercised too
    finally:
        drop_table(table)


@contextmanager
def new_bucket(kms_key_id: str | None = None) -> Iterator[tuple[S3BlobStore, str, object]]:
    """A fresh bucket and its store; yields (store, bucket name, boto3 client)."""
    client = aws_client("s3")
    bucket = f"cairn-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    try:
        yield S3BlobStore(bucket, client=client, kms_key_id=kms_key_id), bucket, client
    finally:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for obj in page.get("Contents", []):
                client.delete_object(Bucket=bucket, Key=obj["Key"])
        client.delete_bucket(Bucket=bucket)


@provides("blob_store", "s3-moto")
@contextmanager
def s3_blob_store() -> Iterator[S3BlobStore]:
    with new_bucket() as (store, _, _):
        yield store


@contextmanager
def osmem_index(dimension: int = SEARCH_DIMENSION) -> Iterator[OpenSearchIndex]:
    """An OpenSearchIndex on a fresh osmem clone; `supports_knn` is False because osmem rejects `knn`."""
    with osmem_server().clone() as clone:
        index = OpenSearchIndex(
            opensearch_client(clone.url, auth="none"), f"t{uuid.uuid4().hex[:8]}", dimension, refresh=True
        )
        index.supports_knn = False
        yield index


@provides("search_index", "opensearch-osmem")
@contextmanager
def opensearch_search_index() -> Iterator[OpenSearchIndex]:
    with osmem_index() as index:
        yield index

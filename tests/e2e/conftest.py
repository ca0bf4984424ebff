"""Fixtures for the whole stack on LocalStack: endpoint discovery (skip when it is down) and AWS clients.

Bring the stack up with ``localstack/up.sh`` (or run everything with ``localstack/run-e2e.sh``). The endpoint
is ``CAIRN_LOCALSTACK_ENDPOINT`` when set, else http://127.0.0.1:4566.
"""

from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Callable

import boto3
import pytest
from botocore.config import Config

ENDPOINT = os.environ.get("CAIRN_LOCALSTACK_ENDPOINT", "http://127.0.0.1:4566")
REGION = "us-east-1"
ACCOUNT = "000000000000"
LAMBDA_ROLE = f"arn:aws:iam::{ACCOUNT}:role/cairn-e2e-lambda"


def _health() -> dict | None:
    try:
        with urllib.request.urlopen(f"{ENDPOINT}/_localstack/health", timeout=2) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


@pytest.fixture(scope="session")
def localstack() -> dict:
    health = _health()
    if health is None:
        pytest.skip(
            f"LocalStack is not answering at {ENDPOINT}/_localstack/health: start it with localstack/up.sh"
        )
    return health


@pytest.fixture(scope="session")
def aws(localstack) -> Callable[..., object]:
    """boto3 client factory bound to LocalStack (path-style S3 so URLs stay on 127.0.0.1)."""

    def client(service: str, **config: object):
        return boto3.client(
            service,
            endpoint_url=ENDPOINT,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}, **config),
        )

    return client


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def zip_source(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def wait_until(predicate: Callable[[], object], timeout: float = 60.0, interval: float = 0.5) -> object:
    # Control-plane state changes are asynchronous in LocalStack; poll, don't sleep a fixed time.
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


ECHO_HANDLER = """
import json
import os
import time

import boto3

INVOCATIONS = {"count": 0}  # module state: survives between invocations of a warm environment


def handler(event, context):
    INVOCATIONS["count"] += 1
    print("echo handler got", json.dumps(event))
    if event.get("fail"):
        raise ValueError("asked to fail")
    if event.get("sleep"):
        time.sleep(float(event["sleep"]))
    if event.get("write_to_bucket"):
        # Reaches LocalStack through AWS_ENDPOINT_URL, which the executor sets like the Docker one does.
        boto3.client("s3").put_object(Bucket=event["write_to_bucket"], Key="from-lambda.txt", Body=b"hi")
    if "httpMethod" in event:  # API Gateway proxy event
        query = event.get("queryStringParameters")
        body = {"path": event["path"], "query": query, "method": event["httpMethod"]}
        return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}
    return {
        "echo": event,
        "invocations": INVOCATIONS["count"],
        "function_name": context.function_name,
        "request_id": context.aws_request_id,
        "remaining_ms": context.get_remaining_time_in_millis(),
        "region": os.environ["AWS_REGION"],
    }
"""


@pytest.fixture(scope="session")
def echo_function(aws) -> str:
    """A tiny Python function from a zip, run by the host executor; returns its ARN."""
    client = aws("lambda")
    name = unique("cairn-e2e-echo")
    arn = client.create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=LAMBDA_ROLE,
        Handler="echo.handler",
        Code={"ZipFile": zip_source({"echo.py": ECHO_HANDLER})},
        Timeout=2,
    )["FunctionArn"]
    client.get_waiter("function_active_v2").wait(FunctionName=name)
    yield arn
    client.delete_function(FunctionName=name)

"""Deploy the CDK app's ``Cairn-local`` stack to the emulated AWS stack, the way ``cdk deploy`` would.

``deploy.py`` (run by the project's venv, which has aws-cdk-lib and boto3):

1. synthesizes ``infra.app`` with ``env=local`` and the context of ``cdk.json`` (what the CDK CLI passes),
   for account 000000000000 / us-east-1 (what the CLI passes as CDK_DEFAULT_ACCOUNT/REGION);
2. bootstraps the emulator the way ``cdk bootstrap`` does as far as a deploy needs it: the asset bucket
   ``cdk-hnb659fds-assets-<account>-<region>`` and the SSM parameter ``/cdk-bootstrap/hnb659fds/version``;
3. publishes every file asset of ``Cairn-local.assets.json`` (zips of the function folders and the layer) and
   the template itself to that bucket, at the object keys the template already names;
4. creates (or updates) the stack from that template with CloudFormation and waits for it;
5. writes the stack's outputs plus what the e2e suite needs (API id, stage, the API URL LocalStack serves,
   queue URLs) to ``.localstack/run/deploy.json``.

The template is not edited: it is the one ``cdk deploy`` would send. The layer asset is NOT the one
``scripts/build_layer.py`` builds: the host Lambda executor runs handlers in the LocalStack venv, which has
the project installed (``pip install -e .[aws]``) and whose packages come before layers on ``sys.path``, so
the cloud layer's cp312 manylinux wheels (~190 MB) would be uploaded and never imported. The layer deployed
here is ``python/cairn`` copied from ``layers/core`` (the layer's own shape, without third-party wheels).

    python localstack/deploy.py            # synth + publish + create/update, prints the outputs
    python localstack/deploy.py --delete   # delete the stack (the emulator is in-memory anyway)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, WaiterError

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HOME = Path(os.environ.get("CAIRN_LOCALSTACK_HOME", REPO / ".localstack")).resolve()
PORT = int(os.environ.get("CAIRN_LOCALSTACK_PORT", "4566"))
ENDPOINT = os.environ.get("CAIRN_LOCALSTACK_ENDPOINT", f"http://127.0.0.1:{PORT}")
BUILD = HOME / "build"
OUTDIR = BUILD / "cdk.out"
LAYER_DIR = BUILD / "layer"
DEPLOY_FILE = HOME / "run" / "deploy.json"

ENV_NAME = "local"
STACK = f"Cairn-{ENV_NAME}"
ACCOUNT, REGION = "000000000000", "us-east-1"
QUALIFIER = "hnb659fds"  # the CDK's default bootstrap qualifier, which the synthesized template names
ASSET_BUCKET = f"cdk-{QUALIFIER}-assets-{ACCOUNT}-{REGION}"
BOOTSTRAP_VERSION = "30"
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]


def log(message: str) -> None:
    print(f"[deploy] {message}", flush=True)


def client(service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=ENDPOINT,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",  # noqa: S106 - LocalStack's fixed dummy credentials
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
    )


# 1. synth
def build_layer() -> Path:
    """``python/cairn`` from the working tree: the layer's shape, without wheels (see the module doc)."""
    target = LAYER_DIR / "python" / "cairn"
    shutil.rmtree(LAYER_DIR, ignore_errors=True)
    shutil.copytree(
        REPO / "layers" / "core" / "cairn", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return LAYER_DIR


def synth(layer_dir: Path) -> Path:
    context = json.loads((REPO / "cdk.json").read_text()).get("context", {})
    context.update(env=ENV_NAME, layer_path=str(layer_dir))
    env = dict(
        os.environ,
        CDK_OUTDIR=str(OUTDIR),
        CDK_CONTEXT_JSON=json.dumps(context),
        CDK_DEFAULT_ACCOUNT=ACCOUNT,
        CDK_DEFAULT_REGION=REGION,
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        CDK_DISABLE_VERSION_CHECK="1",
    )
    shutil.rmtree(OUTDIR, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "infra.app"], cwd=REPO, env=env, check=True)
    template = json.loads((OUTDIR / f"{STACK}.template.json").read_text())
    if "RequireBuiltAssets" in template.get("Rules", {}):
        raise SystemExit("the synthesized template still has placeholder assets: see the synth warnings")
    return OUTDIR


# 2. bootstrap (the part of `cdk bootstrap` a deploy relies on)
def bootstrap() -> None:
    s3, ssm = client("s3"), client("ssm")
    try:
        s3.head_bucket(Bucket=ASSET_BUCKET)
    except ClientError:
        s3.create_bucket(Bucket=ASSET_BUCKET)
    ssm.put_parameter(
        Name=f"/cdk-bootstrap/{QUALIFIER}/version", Value=BOOTSTRAP_VERSION, Type="String", Overwrite=True
    )


# 3. assets
def zip_dir(source: Path, target: Path) -> None:
    # Deterministic like the CDK's own zips: sorted entries, fixed timestamps.
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(source)), date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                archive.writestr(info, path.read_bytes())


def publish_assets(outdir: Path) -> int:
    s3 = client("s3")
    manifest = json.loads((outdir / f"{STACK}.assets.json").read_text())
    count = 0
    for asset_id, asset in manifest.get("files", {}).items():
        source = outdir / asset["source"]["path"]
        if asset["source"].get("packaging") == "zip" or source.is_dir():
            body_path = BUILD / f"{asset_id}.zip"
            zip_dir(source, body_path)
        else:
            body_path = source
        for destination in asset["destinations"].values():
            bucket = substitute(destination["bucketName"])
            s3.upload_file(str(body_path), bucket, substitute(destination["objectKey"]))
            count += 1
    if manifest.get("dockerImages"):
        raise SystemExit("the stack has Docker image assets, which cannot be published here")
    return count


def substitute(text: str) -> str:
    return (
        text.replace("${AWS::AccountId}", ACCOUNT)
        .replace("${AWS::Region}", REGION)
        .replace("${AWS::Partition}", "aws")
    )


def upload_template(outdir: Path) -> str:
    # Over 51,200 bytes a template must come from S3; `cdk deploy` puts it in the asset bucket too.
    body = (outdir / f"{STACK}.template.json").read_bytes()
    key = f"cdk/{STACK}/{hashlib.sha256(body).hexdigest()}.json"
    client("s3").put_object(Bucket=ASSET_BUCKET, Key=key, Body=body)
    return f"{ENDPOINT}/{ASSET_BUCKET}/{key}"


# 4. create / update
def stack_status(cfn: Any) -> str | None:
    try:
        return cfn.describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            return None
        raise


def failure_events(cfn: Any) -> list[str]:
    lines = []
    for event in cfn.describe_stack_events(StackName=STACK).get("StackEvents", []):
        if "FAILED" in event.get("ResourceStatus", ""):
            lines.append(
                f"{event['LogicalResourceId']} ({event.get('ResourceType')}): "
                f"{event['ResourceStatus']} {event.get('ResourceStatusReason', '')}"
            )
    return lines


def deploy_stack(template_url: str, timeout: float) -> dict[str, str]:
    cfn = client("cloudformation")
    status = stack_status(cfn)
    if status and (status.endswith("FAILED") or status == "ROLLBACK_COMPLETE"):
        log(f"{STACK} is {status}: deleting it first")
        delete_stack(timeout)
        status = None
    attempts = max(1, int(timeout // 2))
    if status is None:
        log(f"creating {STACK}")
        cfn.create_stack(
            StackName=STACK, TemplateURL=template_url, Capabilities=CAPABILITIES, OnFailure="DO_NOTHING"
        )
        waiter = "stack_create_complete"
    else:
        log(f"updating {STACK} ({status})")
        try:
            cfn.update_stack(StackName=STACK, TemplateURL=template_url, Capabilities=CAPABILITIES)
        except ClientError as exc:
            if "No updates are to be performed" not in str(exc):
                raise
            return outputs(cfn)
        waiter = "stack_update_complete"
    try:
        cfn.get_waiter(waiter).wait(StackName=STACK, WaiterConfig={"Delay": 2, "MaxAttempts": attempts})
    except WaiterError as exc:
        details = "\n  ".join(failure_events(cfn)) or str(exc)
        raise SystemExit(f"{STACK} did not deploy ({stack_status(cfn)}):\n  {details}") from None
    return outputs(cfn)


def outputs(cfn: Any) -> dict[str, str]:
    stack = cfn.describe_stacks(StackName=STACK)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def delete_stack(timeout: float = 300) -> None:
    cfn = client("cloudformation")
    if stack_status(cfn) is None:
        return
    cfn.delete_stack(StackName=STACK)
    cfn.get_waiter("stack_delete_complete").wait(
        StackName=STACK, WaiterConfig={"Delay": 2, "MaxAttempts": max(1, int(timeout // 2))}
    )


# 5. what the e2e suite reads
def describe(stack_outputs: dict[str, str]) -> dict[str, Any]:
    cfn = client("cloudformation")
    resources = cfn.describe_stack_resources(StackName=STACK)["StackResources"]
    by_type: dict[str, list[dict[str, Any]]] = {}
    for resource in resources:
        by_type.setdefault(resource["ResourceType"], []).append(resource)
    api_id = by_type["AWS::ApiGateway::RestApi"][0]["PhysicalResourceId"]
    queues = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in by_type.get("AWS::SQS::Queue", [])}
    functions = {
        r["LogicalResourceId"]: r["PhysicalResourceId"] for r in by_type.get("AWS::Lambda::Function", [])
    }
    return {
        "stack": STACK,
        "endpoint": ENDPOINT,
        "region": REGION,
        "outputs": stack_outputs,
        "api_id": api_id,
        "stage": ENV_NAME,
        # LocalStack serves REST APIs under this path (no DNS for <id>.execute-api.localhost.localstack.cloud)
        "api_url": f"{ENDPOINT}/_aws/execute-api/{api_id}/{ENV_NAME}",
        "queues": queues,
        "functions": functions,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delete", action="store_true", help="delete the stack instead")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for CloudFormation")
    args = parser.parse_args()
    if args.delete:
        delete_stack(args.timeout)
        DEPLOY_FILE.unlink(missing_ok=True)
        log(f"{STACK} deleted")
        return 0
    timings: dict[str, float] = {}
    started = mark = time.monotonic()
    outdir = synth(build_layer())
    timings["synth"] = time.monotonic() - mark
    mark = time.monotonic()
    bootstrap()
    published = publish_assets(outdir)
    template_url = upload_template(outdir)
    timings["publish"] = time.monotonic() - mark
    log(f"published {published} assets and the template to s3://{ASSET_BUCKET}")
    mark = time.monotonic()
    stack_outputs = deploy_stack(template_url, args.timeout)
    timings["cloudformation"] = time.monotonic() - mark
    timings["total"] = time.monotonic() - started
    info = describe(stack_outputs)
    info["timings_s"] = {key: round(value, 1) for key, value in timings.items()}
    DEPLOY_FILE.parent.mkdir(parents=True, exist_ok=True)
    DEPLOY_FILE.write_text(json.dumps(info, indent=2))
    log(f"{STACK} deployed in {timings['total']:.1f}s {json.dumps(info['timings_s'])}")
    log(f"API: {info['api_url']}  (details: {DEPLOY_FILE})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

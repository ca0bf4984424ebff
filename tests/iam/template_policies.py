"""Each Lambda's role policy, taken from the synthesized template and resolved onto emulated resources.

`synthesized_dev_template()` synthesizes the dev stack once per test run (a file cache keyed by the CDK
app's sources, shared by pytest-xdist workers under a file lock). `role_policy()` resolves `Ref`,
`Fn::GetAtt`, `Fn::Join` and the pseudo parameters onto the ARNs of the resources a test created, and
`for_moto()` adapts the result to what moto's IAM check can evaluate (see docs/deploy.md, "What the
emulation proves"): moto evaluates S3 requests against the object or bucket ARN, but every other service
against the resource "*", and it has no request context for conditions. So statements of other services
get Resource "*" (their real resources are pinned by `test_template_grants.py`), conditions are dropped
(the ListBucket prefix condition is checked against what the code lists, in the same module), and a
statement granting a transaction's item actions also names the operation moto asks for.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
STAGES = ("parse", "chunk", "extract", "consolidate", "reflect", "dream", "fail")
FUNCTION_DIRS = ("api", "mcp", "authorizer", "indexer", "pipeline", "sweeper", "transfer")
ACCOUNT = "123456789012"
REGION = "us-east-1"
TRANSACT_WRITE_ITEM_ACTIONS = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
}


def _sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted((REPO / "infra").rglob("*.py")):
        h.update(path.relative_to(REPO).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def synthesized_dev_template(cache_dir: Path) -> dict:
    """The dev stack's template, synthesized once for these sources (placeholder layer and handlers)."""
    from filelock import FileLock

    cache_dir.mkdir(parents=True, exist_ok=True)
    cached = cache_dir / f"cairn-dev-{_sources_digest()}.json"
    with FileLock(str(cached) + ".lock"):
        if cached.exists():
            return json.loads(cached.read_text())
        os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
        os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
        os.environ.setdefault("CDK_DISABLE_VERSION_CHECK", "1")
        from aws_cdk.assertions import Template

        from infra.app import build_app

        assets = cache_dir / f"assets-{os.getpid()}"
        layer = assets / "layer" / "python"
        layer.mkdir(parents=True, exist_ok=True)
        (layer / "placeholder.py").write_text("# template tests only\n")
        for name in FUNCTION_DIRS:
            (assets / "functions" / name).mkdir(parents=True, exist_ok=True)
            (assets / "functions" / name / "handler.py").write_text("def handler(e, c):\n    return None\n")
        app, stacks = build_app(
            {"env": "dev", "layer_path": str(assets / "layer"), "functions_path": str(assets / "functions")},
            outdir=str(assets / "cdk.out"),
        )
        app.synth()
        (stack,) = stacks
        template = Template.from_stack(stack).to_json()
        cached.write_text(json.dumps(template))
        return template


def resources(template: dict, type_: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_}


def function_id(template: dict, service: str, handler: str = "handler.handler") -> str:
    found = [
        k
        for k, v in resources(template, "AWS::Lambda::Function").items()
        if v["Properties"].get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME")
        == service
        and v["Properties"]["Handler"] == handler
    ]
    assert len(found) == 1, (service, handler, found)
    return found[0]


def role_statements(template: dict, function_logical_id: str) -> list[dict]:
    """Every statement of the inline policies attached to the function's role."""
    fn = template["Resources"][function_logical_id]
    role_id = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    out: list[dict] = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            out.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    role = template["Resources"][role_id]["Properties"]
    assert not role.get("Policies"), "inline role policies are not expected"
    return out


@dataclass
class Physical:
    """The emulated resources that stand for the template's logical ones: {logical id: {attr: value}}."""

    by_logical_id: dict[str, dict[str, str]]

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "Ref" in value:
            ref = value["Ref"]
            pseudo = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}
            if ref in pseudo:
                return pseudo[ref]
            return self._attr(ref, "Ref")
        if "Fn::GetAtt" in value:
            logical, attr = value["Fn::GetAtt"]
            return self._attr(logical, attr)
        if "Fn::Join" in value:
            sep, parts = value["Fn::Join"]
            return sep.join(str(self.resolve(p)) for p in parts)
        return {k: self.resolve(v) for k, v in value.items()}

    def _attr(self, logical: str, attr: str) -> str:
        attrs = self.by_logical_id.get(logical)
        if attrs is None or attr not in attrs:
            # a resource no emulated call can reach (OpenSearch domain, log groups, X-Ray): a placeholder
            return f"arn:aws:unemulated:::{logical}/{attr}"
        return attrs[attr]


def resolved_statements(template: dict, function_logical_id: str, physical: Physical) -> list[dict]:
    return [physical.resolve(st) for st in role_statements(template, function_logical_id)]


def for_moto(statements: list[dict]) -> dict:
    """A policy document moto can evaluate: S3 statements as they are (resource-level), the others on
    "*" (moto checks only their actions), conditions dropped (moto has no request context)."""
    out = []
    for st in statements:
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        adapted = {"Effect": st["Effect"], "Action": actions}
        if all(a.startswith("s3:") for a in actions):
            adapted["Resource"] = st["Resource"]
            adapted["Action"] = [*actions, *s3_operation_names_moto_asks_for(actions)]
        else:
            assert not any(a.startswith("s3:") for a in actions), "mixed S3 statement"
            adapted["Resource"] = "*"
            # AWS authorises a transaction by its items' own actions ("Using IAM with DynamoDB
            # transactions"); moto asks for the operation's name instead, which no real policy grants
            if set(actions) & TRANSACT_WRITE_ITEM_ACTIONS:
                adapted["Action"] = [*actions, "dynamodb:TransactWriteItems"]
            # moto asks for "lambda:Invoke" (the operation's name); AWS for lambda:InvokeFunction
            if "lambda:InvokeFunction" in actions:
                adapted["Action"] = [*adapted["Action"], "lambda:Invoke"]
            if "dynamodb:GetItem" in actions:
                adapted["Action"] = [*adapted["Action"], "dynamodb:TransactGetItems"]
        out.append(adapted)
    return {"Version": "2012-10-17", "Statement": out}


# --- what AWS authorises each call by, and whether the template's statements allow it ----------------

DYNAMO_TRANSACT_ITEM = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}
S3_OPERATION = {
    "ListObjectsV2": "s3:ListBucket",
    "ListObjects": "s3:ListBucket",
    "GetObject": "s3:GetObject",
    "HeadObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "DeleteObject": "s3:DeleteObject",
    "ListObjectVersions": "s3:ListBucketVersions",
    "DeleteObjects": "s3:DeleteObjectVersion",  # per object named (with its VersionId)
    # a multipart upload is authorised as PutObject, but its abort ("S3 actions" reference)
    "CreateMultipartUpload": "s3:PutObject",
    "UploadPart": "s3:PutObject",
    "CompleteMultipartUpload": "s3:PutObject",
    "AbortMultipartUpload": "s3:AbortMultipartUpload",
}


def s3_operation_names_moto_asks_for(actions: list[str]) -> list[str]:
    """The S3 API operations the granted IAM actions authorise, named as moto >= 5.2.6 asks for them.

    moto 5.2.6 (getmoto/moto, `BaseResponse._get_action` now always takes the operation the request
    routes to) authorises an S3 request by its API operation's name: `s3:ListObjectsV2`, `s3:HeadObject`.
    AWS authorises it by the IAM action in the S3 "Actions, resources, and condition keys" reference
    (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html): ListObjectsV2
    by `s3:ListBucket`, HeadObject by `s3:GetObject`. No real policy grants the operation names, so a
    statement that grants the IAM action also grants, for moto only, the operations it authorises
    (`S3_OPERATION` is the one table of both). moto 5.2.5 asked for the IAM action and passed as is.
    """
    granted = set(actions)
    return sorted(
        f"s3:{operation}"
        for operation, action in S3_OPERATION.items()
        if f"s3:{operation}" not in granted
        and (action in granted or (operation == "DeleteObjects" and "s3:DeleteObject" in granted))
    )


@dataclass(frozen=True)
class Need:
    """One authorisation AWS makes for a call: an action on a resource, with the request's context."""

    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = ()


def needs(signing_name: str, operation: str, params: dict[str, Any], physical: Physical) -> list[Need]:
    """The IAM authorisations behind one recorded call (AWS service authorisation reference), including
    those S3 makes on the caller's behalf: SSE-KMS objects need kms:GenerateDataKey to be written and
    kms:Decrypt to be read, under the caller's own permissions."""
    region_account = f"{REGION}:{ACCOUNT}"
    if signing_name == "s3":
        bucket = params["Bucket"]
        action = S3_OPERATION[operation]
        if operation == "DeleteObjects":  # one authorisation per object, by whether it names a version
            return [
                Need(action if o.get("VersionId") else "s3:DeleteObject", f"arn:aws:s3:::{bucket}/{o['Key']}")
                for o in params["Delete"]["Objects"]
            ]
        if action in ("s3:ListBucket", "s3:ListBucketVersions"):
            return [Need(action, f"arn:aws:s3:::{bucket}", (("s3:prefix", params.get("Prefix", "")),))]
        out = [Need(action, f"arn:aws:s3:::{bucket}/{params['Key']}")]
        key = _bucket_key(physical)
        if operation == "CreateMultipartUpload":  # under SSE-KMS a multipart upload needs both
            out += [Need("kms:GenerateDataKey", key), Need("kms:Decrypt", key)]
        elif action == "s3:PutObject":
            out.append(Need("kms:GenerateDataKey", key))
        elif action == "s3:GetObject":
            out.append(Need("kms:Decrypt", key))
        return out
    if signing_name == "dynamodb":
        if operation == "TransactWriteItems" or operation == "TransactGetItems":
            out = []
            for item in params["TransactItems"]:
                ((kind, body),) = item.items()
                out.append(Need(DYNAMO_TRANSACT_ITEM[kind], _table_arn(body["TableName"])))
            return out
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [Need(f"dynamodb:{operation}", _table_arn(t)) for t in params["RequestItems"]]
        resource = _table_arn(params["TableName"])
        if params.get("IndexName"):
            resource += f"/index/{params['IndexName']}"
        return [Need(f"dynamodb:{operation}", resource)]
    if signing_name == "secretsmanager":
        return [Need(f"secretsmanager:{operation}", params["SecretId"])]
    if signing_name == "states":
        return [Need(f"states:{operation}", params["stateMachineArn"])]
    if signing_name == "lambda":
        name = params["FunctionName"]
        arn = name if name.startswith("arn:") else f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
        return [Need(f"lambda:{operation}Function" if operation == "Invoke" else f"lambda:{operation}", arn)]
    if signing_name == "kms":
        return [Need(f"kms:{operation}", params["KeyId"])]
    raise AssertionError(f"no IAM mapping for {signing_name}:{operation} in {region_account}")


def _table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def _bucket_key(physical: Physical) -> str:
    ((logical, attrs),) = [
        (k, v) for k, v in physical.by_logical_id.items() if v.get("Arn", "").startswith("arn:aws:kms")
    ]
    return attrs["Arn"]


def _wildcard(pattern: str, value: str) -> bool:
    import re

    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), value) is not None


def _conditions_hold(condition: dict | None, context: dict[str, str]) -> bool:
    for operator, tests in (condition or {}).items():
        for key, wanted in tests.items():
            wanted = wanted if isinstance(wanted, list) else [wanted]
            if key not in context:
                return False
            if operator == "StringLike":
                ok = any(_wildcard(w, context[key]) for w in wanted)
            elif operator == "StringEquals":
                ok = context[key] in wanted
            else:
                raise AssertionError(f"condition operator {operator} not evaluated here")
            if not ok:
                return False
    return True


def allowed(statements: list[dict], need: Need) -> bool:
    """Whether the resolved statements allow `need`, as IAM evaluates an identity policy without Deny."""
    context = dict(need.context)
    for st in statements:
        assert st["Effect"] == "Allow", "the template's role policies grant only"
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        if not any(_wildcard(a, need.action) for a in actions):
            continue
        resources_ = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
        if not any(_wildcard(str(r), need.resource) for r in resources_):
            continue
        if _conditions_hold(st.get("Condition"), context):
            return True
    return False


def ungranted(statements: list[dict], calls: list[tuple[str, str, dict]], physical: Physical) -> list[str]:
    """Each recorded call's authorisations the statements do not allow, as readable lines."""
    missing = []
    for signing_name, operation, params in calls:
        for need in needs(signing_name, operation, params, physical):
            if not allowed(statements, need):
                missing.append(
                    f"{operation}: {need.action} on {need.resource} {dict(need.context) or ''}".strip()
                )
    return sorted(set(missing))

"""One CDK synth per test session (dev + prod in one app): jsii start-up and synth cost ~15 s."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
os.environ.setdefault("CDK_DISABLE_VERSION_CHECK", "1")

pytest.importorskip("aws_cdk", reason="aws-cdk-lib is not installed (pip install -e '.[cdk]')")
pytest.importorskip("cdk_nag", reason="cdk-nag is not installed (pip install 'cdk-nag==2.38.2')")

ENVIRONMENTS = ("dev", "prod")
FUNCTION_DIRS = ("api", "mcp", "authorizer", "indexer", "pipeline", "sweeper", "reindex", "transfer")


@dataclass
class Synth:
    outdir: Path
    templates: dict[str, Any]  # env -> aws_cdk.assertions.Template
    json: dict[str, dict]  # env -> template dict
    messages: dict[str, list]  # env -> cloud-assembly messages (cdk-nag findings)
    stacks: dict[str, Any]


def _placeholder_assets(root: Path) -> tuple[Path, Path]:
    """Stand-ins for build/layer and functions/<name>/: template tests need neither PyPI nor handlers."""
    layer = root / "layer"
    (layer / "python").mkdir(parents=True)
    (layer / "python" / "placeholder.py").write_text("# template tests only\n")
    functions = root / "functions"
    for name in FUNCTION_DIRS:
        (functions / name).mkdir(parents=True)
        (functions / name / "handler.py").write_text("def handler(event, context):\n    return None\n")
    return layer, functions


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    from aws_cdk.assertions import Template

    from infra.app import build_app

    root = tmp_path_factory.mktemp("cdk")
    layer, functions = _placeholder_assets(root / "assets")
    outdir = root / "cdk.out"
    app, stacks = build_app(
        {"env": ",".join(ENVIRONMENTS), "layer_path": str(layer), "functions_path": str(functions)},
        outdir=str(outdir),
    )
    assembly = app.synth()
    by_env = {s.node.id.removeprefix("Cairn-"): s for s in stacks}
    templates = {env: Template.from_stack(stack) for env, stack in by_env.items()}
    return Synth(
        outdir=outdir,
        templates=templates,
        json={env: t.to_json() for env, t in templates.items()},
        messages={env: list(assembly.get_stack_by_name(s.stack_name).messages) for env, s in by_env.items()},
        stacks=by_env,
    )


@pytest.fixture(scope="session")
def dev(synth: Synth) -> Any:
    return synth.templates["dev"]


@pytest.fixture(scope="session")
def prod(synth: Synth) -> Any:
    return synth.templates["prod"]


# ---- helpers over the template dict ----------------------------------------------------------------------


def resources(template: dict, type_: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_}


def function_by_service(template: dict, service: str, handler: str | None = None) -> tuple[str, dict]:
    found = [
        (k, v)
        for k, v in resources(template, "AWS::Lambda::Function").items()
        if v["Properties"].get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME")
        == service
        and (handler is None or v["Properties"]["Handler"] == handler)
    ]
    assert len(found) == 1, f"expected one function for {service} {handler}, found {len(found)}"
    return found[0]


def role_statements(template: dict, function: dict) -> list[dict]:
    """Every IAM statement attached to the function's role by inline policies."""
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    statements: list[dict] = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            statements.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return statements


def actions_of(statements: list[dict]) -> set[str]:
    out: set[str] = set()
    for st in statements:
        acts = st["Action"]
        out.update([acts] if isinstance(acts, str) else acts)
    return out

"""LLM extraction through Bedrock is a per-environment setting: off, the extract stage uses the rules and
no role may call Bedrock; on, the extract stage alone gets the setting and InvokeModel on that model."""

from __future__ import annotations

import pytest
from aws_cdk import App, Environment, Stack

from infra.units.bedrock import model_arns
from tests.infra.conftest import (
    _placeholder_assets,
    actions_of,
    function_by_service,
    resources,
    role_statements,
)

pytestmark = pytest.mark.infra

PROFILE = "eu.anthropic.claude-3-haiku-20240307-v1:0"


def _bedrock_statements(template: dict, fn: dict) -> list[dict]:
    return [
        s for s in role_statements(template, fn) if any(a.startswith("bedrock:") for a in actions_of([s]))
    ]


def test_by_default_no_environment_extracts_with_an_llm_and_no_role_may_call_bedrock(synth):
    for template in synth.json.values():
        for fn in resources(template, "AWS::Lambda::Function").values():
            variables = fn["Properties"]["Environment"]["Variables"]
            assert "CAIRN_EXTRACTOR" not in variables and "CAIRN_EXTRACTOR_MODEL" not in variables
            assert _bedrock_statements(template, fn) == []


@pytest.fixture(scope="module")
def with_bedrock(tmp_path_factory):
    from aws_cdk.assertions import Template

    from infra.app import build_app

    root = tmp_path_factory.mktemp("cdk-bedrock")
    layer, functions = _placeholder_assets(root / "assets")
    _, [stack] = build_app(
        {
            "env": "dev",
            "extractor_model": PROFILE,
            "nag": "false",
            "layer_path": str(layer),
            "functions_path": str(functions),
        },
        outdir=str(root / "cdk.out"),
    )
    return Template.from_stack(stack).to_json()


def test_turned_on_only_the_extract_stage_gets_the_setting_and_invoke_model_on_that_model(with_bedrock):
    template = with_bedrock
    _, extract = function_by_service(template, "cairn-pipeline", "handler.extract")
    variables = extract["Properties"]["Environment"]["Variables"]
    assert variables["CAIRN_EXTRACTOR"] == "bedrock" and variables["CAIRN_EXTRACTOR_MODEL"] == PROFILE
    [statement] = _bedrock_statements(template, extract)
    assert statement["Action"] == "bedrock:InvokeModel" and statement["Effect"] == "Allow"
    resources_ = str(statement["Resource"])
    assert f"inference-profile/{PROFILE}" in resources_
    assert "foundation-model/anthropic.claude-3-haiku-20240307-v1:0" in resources_
    assert "*" not in resources_.replace("bedrock:*::", "")  # no wildcard but the profile's Regions

    for fn_id, fn in resources(template, "AWS::Lambda::Function").items():
        if fn is extract or fn["Properties"].get("Handler") == "handler.extract":
            continue
        assert "CAIRN_EXTRACTOR" not in fn["Properties"]["Environment"]["Variables"], fn_id
        assert _bedrock_statements(template, fn) == [], fn_id


def test_a_foundation_model_id_is_granted_as_that_model_in_the_stacks_region():
    stack = Stack(App(), "S", env=Environment(account="123456789012", region="eu-west-1"))

    def resolved(model: str) -> list[str]:
        return [stack.resolve(arn) if "${Token" in arn else arn for arn in model_arns(stack, model)]

    def text(value) -> str:  # {"Fn::Join": ["", [...]]} with the partition token -> aws
        if isinstance(value, str):
            return value
        return "".join("aws" if isinstance(p, dict) else p for p in value["Fn::Join"][1])

    assert [text(a) for a in resolved("anthropic.claude-3-haiku-20240307-v1:0")] == [
        "arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0"
    ]
    assert [text(a) for a in resolved(PROFILE)] == [
        f"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/{PROFILE}",
        "arn:aws:bedrock:*::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
    ]

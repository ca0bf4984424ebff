"""LLM extraction through Amazon Bedrock, per environment: the extract stage's settings and its one grant.

`EnvironmentConfig.extractor_model` (or ``-c extractor_model=<id>`` at synth) turns it on: the extract
stage Lambda gets CAIRN_EXTRACTOR=bedrock and the model id (cairn.settings -> cairn.bootstrap builds the
Bedrock Converse extractor, which falls back to the rules when Bedrock is down or refuses), and its role
gets ``bedrock:InvokeModel`` on that model alone (Converse is authorized as InvokeModel). Unset, the
stage uses the rules and is granted nothing on Bedrock.

A model id with a geography prefix (``eu.``, ``us.``, ``apac.``, ``global.``...) is a cross-Region inference
profile: the grant names the profile in this account and Region, and the foundation model it routes to in
every Region the profile may send the request to.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from infra.config import EnvironmentConfig

INFERENCE_PROFILE_PREFIXES = ("us", "eu", "apac", "us-gov", "ca", "jp", "au", "global")


def extractor_environment(config: EnvironmentConfig) -> dict[str, str]:
    if not config.extractor_model:
        return {}
    return {"CAIRN_EXTRACTOR": "bedrock", "CAIRN_EXTRACTOR_MODEL": config.extractor_model}


def model_arns(stack: Stack, model_id: str) -> list[str]:
    geography, _, base = model_id.partition(".")
    if base and geography in INFERENCE_PROFILE_PREFIXES:
        return [
            stack.format_arn(service="bedrock", resource="inference-profile", resource_name=model_id),
            f"arn:{stack.partition}:bedrock:*::foundation-model/{base}",
        ]
    return [
        stack.format_arn(service="bedrock", account="", resource="foundation-model", resource_name=model_id)
    ]


def grant_invoke_model(function: lambda_.IFunction, config: EnvironmentConfig) -> None:
    if not config.extractor_model:
        return
    function.add_to_role_policy(
        iam.PolicyStatement(
            actions=["bedrock:InvokeModel"],
            resources=model_arns(Stack.of(function), config.extractor_model),
        )
    )

"""CDK entry point: ``cdk synth -c env=dev`` (or ``CDK_OUTDIR=cdk.out python -m infra.app``).

Context keys: ``env`` (dev|staging|prod|local), ``layer_path`` (default build/layer), ``functions_path``
(default functions), ``alarm_email`` (optional), ``extractor_model`` (optional: LLM extraction through
this Bedrock model, overriding the environment's ``extractor_model``), ``nag`` (false to skip cdk-nag).
No AWS or git call happens at synth: the stack is environment-agnostic unless CDK_DEFAULT_ACCOUNT/REGION
are set by the CLI.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from aws_cdk import App, Aspects, Environment

from infra.config import EnvironmentConfig, get_config
from infra.stack import CairnStack

DEFAULT_CONTEXT = {"env": "dev", "layer_path": "build/layer", "functions_path": "functions"}


def _truthy(value: Any) -> bool:
    return str(value).lower() not in ("false", "0", "no", "off", "")


def _with_context(config: EnvironmentConfig, ctx: Any) -> EnvironmentConfig:
    model = ctx("extractor_model")
    return replace(config, extractor_model=str(model)) if model else config


def build_app(
    context: Mapping[str, Any] | None = None, *, outdir: str | None = None
) -> tuple[App, list[CairnStack]]:
    """Build the app. ``context["env"]`` may be a comma-separated list (tests build dev and prod together)."""
    app = App(context=dict(context or {}), outdir=outdir)

    def ctx(key: str) -> Any:
        value = app.node.try_get_context(key)
        return DEFAULT_CONTEXT.get(key) if value is None else value

    account, region = os.environ.get("CDK_DEFAULT_ACCOUNT"), os.environ.get("CDK_DEFAULT_REGION")
    env = Environment(account=account, region=region) if account and region else None
    stacks = [
        CairnStack(
            app,
            config=_with_context(get_config(name.strip()), ctx),
            layer_path=str(ctx("layer_path")),
            functions_path=str(ctx("functions_path")),
            alarm_email=ctx("alarm_email"),
            env=env,
        )
        for name in str(ctx("env")).split(",")
    ]
    if _truthy(ctx("nag") if ctx("nag") is not None else True):
        from cdk_nag import AwsSolutionsChecks

        Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    return app, stacks


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()

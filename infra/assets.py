"""Where the Lambda code and the layer come from, and what happens when they are not there yet.

``cdk synth`` must work offline and before anyone has built the layer or written every handler, but a deploy
must never ship a placeholder. A missing folder is therefore replaced by ``infra/placeholder`` for the
synthesized template, a synth warning names it, and the template gets a CloudFormation rule whose
assertion always fails (the same mechanism as CDK's bootstrap-version check): ``cdk deploy`` stops before
any resource changes, with a message that says what to build.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Annotations, CfnRule, CfnRuleAssertion, Fn, Stack
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

REPO_ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER_DIR = Path(__file__).resolve().parent / "placeholder"


class AssetSource(Construct):
    """Resolves the layer folder and the per-function code folders from context-given roots."""

    def __init__(self, scope: Construct, construct_id: str, *, layer_path: str, functions_path: str) -> None:
        super().__init__(scope, construct_id)
        self.layer_dir = _absolute(layer_path)
        self.functions_dir = _absolute(functions_path)
        self.missing: list[str] = []
        self._rule: CfnRule | None = None

    def layer_code(self) -> lambda_.Code:
        return self._code(self.layer_dir, hint="run `python scripts/build_layer.py` (builds build/layer)")

    def function_code(self, name: str) -> lambda_.Code:
        return self._code(self.functions_dir / name, hint=f"add functions/{name}/ (handler module)")

    def _code(self, path: Path, *, hint: str) -> lambda_.Code:
        if path.is_dir():
            return lambda_.Code.from_asset(str(path))
        self.missing.append(str(path))
        Annotations.of(self).add_warning_v2(
            "cairn:placeholder-asset",
            f"{path} does not exist: synthesized with a placeholder; deploy is blocked until you {hint}",
        )
        self._guard_deploy()
        return lambda_.Code.from_asset(str(PLACEHOLDER_DIR))

    def _guard_deploy(self) -> None:
        if self._rule is not None:
            return
        stack = Stack.of(self)
        # Fn::Equals of two different literals: evaluated at change-set time, always fails.
        self._rule = CfnRule(
            stack,
            "RequireBuiltAssets",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_equals("placeholder-assets", "built-assets"),
                    assert_description=(
                        "This template was synthesized with placeholder Lambda code or layer. "
                        "Build the layer (python scripts/build_layer.py) and the functions/ folders, "
                        "then deploy."
                    ),
                )
            ],
        )


def _absolute(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p

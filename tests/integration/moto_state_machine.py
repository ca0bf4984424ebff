"""The CDK-synthesized learning state machine deployed on moto, with our stage handlers as its Lambda code.

moto executes Step Functions definitions (config ``execute_state_machine``) and its Lambda API answers
``Invoke``, but without Docker it runs no function code: ``LambdaFunction._invoke_lambda`` is where its
Lambda backend would start a container. ``HostLambdaRuntime`` takes that one place, the way the LocalStack
host executor (localstack/plugin/) replaces LocalStack's Docker executor: it imports the function's code
module once, in this process, and calls the handler named by the function's ``Handler`` setting with the
invocation payload. An exception becomes the error payload the Python runtime returns
(``errorType``/``errorMessage``) with a function error, so Step Functions' Retry/Catch see the error name
(and ``States.TaskFailed`` matches it). Everything between the state machine and that call is moto's:
the task's ``Invoke`` request, the function lookup by ARN, the response and its error header.
"""

from __future__ import annotations

import importlib.util
import io
import json
import threading
import time
import traceback
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REGION = "eu-west-1"
ACCOUNT = "123456789012"  # moto's default account
EXECUTE_STATE_MACHINES = {"stepfunctions": {"execute_state_machine": True}}


# ---- the definition CDK produced ---------------------------------------------------------------------


def synthesize(root: Path, env: str = "dev") -> dict:
    """The stack template of one environment, synthesized from infra.app (no bundling, no cdk-nag)."""
    from infra.app import build_app
    from tests.infra.conftest import _placeholder_assets

    layer, functions = _placeholder_assets(root / "assets")
    context = {
        "env": env,
        "layer_path": str(layer),
        "functions_path": str(functions),
        "nag": "false",  # cdk-nag findings do not change the definition; tests/infra checks them
        "aws:cdk:bundling-stacks": [],
    }
    app, stacks = build_app(context, outdir=str(root / "cdk.out"))
    return app.synth().get_stack_by_name(stacks[0].stack_name).template


def _one(template: dict, type_: str) -> tuple[str, dict]:
    found = [(k, v) for k, v in template["Resources"].items() if v["Type"] == type_]
    assert len(found) == 1, f"expected one {type_}, found {len(found)}"
    return found[0]


def state_machine_of(template: dict, suffix: str = "-learning") -> dict:
    """The learning state machine's properties (the scheduled dream pass has its own, `-dream`)."""
    (found,) = [
        v["Properties"]
        for v in template["Resources"].values()
        if v["Type"] == "AWS::StepFunctions::StateMachine"
        and str(v["Properties"].get("StateMachineName", "")).endswith(suffix)
    ]
    return found


def definition_tokens(state_machine: dict) -> list[dict]:
    """The intrinsics CDK left in the definition (the parts of its Fn::Join that are not plain text)."""
    separator, parts = state_machine["DefinitionString"]["Fn::Join"]
    assert separator == ""
    return [p for p in parts if not isinstance(p, str)]


def render_definition(state_machine: dict, resolve: Callable[[dict], str]) -> str:
    """The definition text: CDK's own strings byte for byte, each intrinsic replaced by ``resolve(token)``."""
    _, parts = state_machine["DefinitionString"]["Fn::Join"]
    return "".join(p if isinstance(p, str) else resolve(p) for p in parts)


# ---- moto's Lambda runtime stand-in ------------------------------------------------------------------


class TransientStageError(Exception):
    """Injected: a failure that goes away on the next attempt (a throttled dependency, a cold network)."""


class BrokenStageError(Exception):
    """Injected: a failure no retry cures."""


@dataclass
class LambdaContext:
    """The attributes of the Lambda runtime's context object that our handlers (Powertools) read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = ""
    deadline: float = 0.0

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


@dataclass
class Invocation:
    function_name: str
    handler: str
    error: str | None  # errorType when the invocation failed


@dataclass
class HostLambdaRuntime:
    """Runs each function's handler from ``code_dir`` in this process; failures are injected per handler."""

    code_dir: Path
    invocations: list[Invocation] = field(default_factory=list)
    _modules: dict[str, ModuleType] = field(default_factory=dict)
    _faults: dict[str, list[Exception | None]] = field(default_factory=dict)  # handler -> next outcomes
    _always: dict[str, Exception] = field(default_factory=dict)
    _gates: dict[str, tuple[threading.Event, threading.Event]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def module(self, name: str) -> ModuleType:
        """The code module, imported once (a warm execution environment keeps its container)."""
        with self._lock:
            if name not in self._modules:
                spec = importlib.util.spec_from_file_location(
                    f"host_lambda_{name}", self.code_dir / f"{name}.py"
                )
                assert spec and spec.loader, f"no {name}.py in {self.code_dir}"
                loaded = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(loaded)
                self._modules[name] = loaded
            return self._modules[name]

    def fail_once(self, handler: str, error: Exception) -> None:
        with self._lock:
            self._faults.setdefault(handler, []).append(error)

    def fail_always(self, handler: str, error: Exception) -> None:
        with self._lock:
            self._always[handler] = error

    def hold(self, handler: str) -> tuple[threading.Event, threading.Event]:
        """The next call of ``handler`` sets ``reached`` and then waits for ``release``: a run kept mid-way
        while the test does something else (another upload). Returns (reached, release)."""
        gate = (threading.Event(), threading.Event())
        with self._lock:
            self._gates[handler] = gate
        return gate

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self._always.clear()
            self._gates.clear()
            self.invocations.clear()

    def calls(self, handler: str) -> list[Invocation]:
        return [i for i in self.invocations if i.handler == handler]

    def _injected(self, handler: str) -> Exception | None:
        with self._lock:
            if handler in self._always:
                return self._always[handler]
            queued = self._faults.get(handler)
            return queued.pop(0) if queued else None

    def invoke(self, fn: Any, event: Any) -> tuple[str, bool, str]:
        """In place of ``moto.awslambda.models.LambdaFunction._invoke_lambda``: (payload, errored, logs)."""
        module_name, _, attr = str(fn.handler).rpartition(".")
        context = LambdaContext(
            function_name=fn.function_name,
            invoked_function_arn=fn.function_arn,
            memory_limit_in_mb=int(fn.memory_size),
            aws_request_id=str(uuid.uuid4()),
            log_group_name=f"/aws/lambda/{fn.function_name}",
            deadline=time.monotonic() + float(fn.timeout or 3),
        )
        with self._lock:
            gate = self._gates.pop(fn.handler, None)
        if gate is not None:
            gate[0].set()
            gate[1].wait(60)
        try:
            injected = self._injected(fn.handler)
            if injected is not None:
                raise injected
            result = getattr(self.module(module_name), attr)(event, context)
        except Exception as exc:  # noqa: BLE001 - the runtime reports every handler error the same way
            self.invocations.append(Invocation(fn.function_name, fn.handler, type(exc).__name__))
            error = {
                "errorMessage": str(exc),
                "errorType": type(exc).__name__,
                "requestId": context.aws_request_id,
                "stackTrace": traceback.format_tb(exc.__traceback__),
            }
            return json.dumps(error), True, ""
        self.invocations.append(Invocation(fn.function_name, fn.handler, None))
        return json.dumps(result), False, ""

    def install(self, monkeypatch: Any) -> None:
        """Make moto's Lambda backend run handlers here (it would otherwise try Docker and fail)."""
        from moto.awslambda.models import LambdaFunction

        runtime = self

        def _invoke_lambda(fn: Any, event: Any = None) -> tuple[str, bool, str]:
            return runtime.invoke(fn, {} if event is None else event)

        monkeypatch.setattr(LambdaFunction, "_invoke_lambda", _invoke_lambda)


# ---- the pipeline's resources on moto ----------------------------------------------------------------


@dataclass
class PipelineOnMoto:
    state_machine_arn: str
    definition: str
    queue_url: str
    function_arns: dict[str, str]  # logical id -> ARN
    sfn: Any
    sqs: Any

    def run(self, event: dict, *, deadline_s: float = 120) -> dict:
        """Start an execution with the event as input and wait until it ends; returns describe_execution."""
        return self.wait(self.start(event), deadline_s=deadline_s)

    def start(self, event: dict) -> str:
        """Start an execution (moto runs it in a thread of its own, as EventBridge would); its ARN."""
        # named as EventBridge names them (moto would name every unnamed execution "None")
        return self.sfn.start_execution(
            stateMachineArn=self.state_machine_arn, name=str(uuid.uuid4()), input=json.dumps(event)
        )["executionArn"]

    def wait(self, arn: str, *, deadline_s: float = 120) -> dict:
        """Wait until the execution ends; returns describe_execution."""
        end = time.monotonic() + deadline_s
        while True:
            described = self.sfn.describe_execution(executionArn=arn)
            if described["status"] != "RUNNING" or time.monotonic() > end:
                return described
            time.sleep(0.05)

    def history(self, execution_arn: str) -> list[dict]:
        events: list[dict] = []
        kwargs: dict = {"executionArn": execution_arn, "maxResults": 1000}
        while True:
            page = self.sfn.get_execution_history(**kwargs)
            events.extend(page["events"])
            if not page.get("nextToken"):
                return events
            kwargs["nextToken"] = page["nextToken"]

    def dead_letters(self) -> list[dict]:
        got = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        return [json.loads(m["Body"]) for m in got.get("Messages", [])]


def _code_zip() -> bytes:
    # The Lambda API wants a package; the code that runs is the host runtime's (functions/pipeline/).
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("handler.py", "# run by HostLambdaRuntime\n")
    return buf.getvalue()


def deploy(template: dict, session: Any) -> PipelineOnMoto:
    """Create what the definition references (functions, dead-letter queue), then the state machine.

    Only the intrinsics are resolved, as CloudFormation would: ``Fn::GetAtt <function>.Arn`` to the ARN of the
    function created here with the template's Handler/Runtime/MemorySize/Timeout, ``Ref <queue>`` to the
    queue URL, ``Ref AWS::Partition`` to ``aws``. Anything else in the definition fails loudly.
    """
    iam, lam, sqs, sfn = (
        session.client(s, region_name=REGION) for s in ("iam", "lambda", "sqs", "stepfunctions")
    )
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
    role = iam.create_role(RoleName="cairn-pipeline", AssumeRolePolicyDocument=json.dumps(trust))["Role"][
        "Arn"
    ]
    machine = state_machine_of(template)
    resources = template["Resources"]
    function_arns: dict[str, str] = {}
    refs: dict[str, str] = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}
    for token in definition_tokens(machine):
        if "Fn::GetAtt" in token:
            logical, attr = token["Fn::GetAtt"]
            props = resources[logical]["Properties"]
            assert resources[logical]["Type"] == "AWS::Lambda::Function" and attr == "Arn", token
            if logical not in function_arns:
                function_arns[logical] = lam.create_function(
                    FunctionName=logical,
                    Runtime=props["Runtime"],
                    Role=role,
                    Handler=props["Handler"],
                    Code={"ZipFile": _code_zip()},
                    MemorySize=props["MemorySize"],
                    Timeout=props["Timeout"],
                )["FunctionArn"]
        elif "Ref" in token and token["Ref"] not in refs:
            logical = token["Ref"]
            assert resources[logical]["Type"] == "AWS::SQS::Queue", token
            refs[logical] = sqs.create_queue(QueueName=logical)["QueueUrl"]
    queues = [v for k, v in refs.items() if not k.startswith("AWS::")]
    assert len(queues) == 1, "the definition should reference the dead-letter queue only"

    def resolve(token: dict) -> str:
        if "Fn::GetAtt" in token:
            return function_arns[token["Fn::GetAtt"][0]]
        if "Ref" in token:
            return refs[token["Ref"]]
        raise AssertionError(f"unexpected intrinsic in the definition: {token}")

    definition = render_definition(machine, resolve)
    sfn_role = iam.create_role(
        RoleName="cairn-learning",
        AssumeRolePolicyDocument=json.dumps(
            {
                **trust,
                "Statement": [{**trust["Statement"][0], "Principal": {"Service": "states.amazonaws.com"}}],
            }
        ),
    )["Role"]["Arn"]
    arn = sfn.create_state_machine(
        name=machine["StateMachineName"],
        definition=definition,
        roleArn=sfn_role,
        type=machine["StateMachineType"],
    )["stateMachineArn"]
    return PipelineOnMoto(arn, definition, queues[0], function_arns, sfn, sqs)

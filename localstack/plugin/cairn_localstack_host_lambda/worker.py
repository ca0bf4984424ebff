"""The Lambda execution environment as a host process: imports the handler once and serves invocations.

Runs under the Python that runs the handler, with the standard library only. It talks to the executor over
two inherited pipe file descriptors (one JSON object per line each way) so that whatever the handler prints
can never corrupt the protocol; stdout and stderr are captured per invocation at the file-descriptor level (C
extensions and child processes included) and sent back as the invocation's logs, like a function's CloudWatch
stream.

The handler module is imported once at start (the init phase, reported with a "ready" line before any event)
and stays imported between invocations, as in a warm Lambda sandbox, so module-level state is reused.
"""

from __future__ import annotations

import decimal
import importlib
import json
import os
import sys
import tempfile
import threading
import time
import traceback
from typing import Any


class LambdaContext:
    """The subset of the AWS Lambda context object that handlers and Powertools read."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn = request.get("invoked_function_arn", "")
        self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        self.aws_request_id = request["request_id"]
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self.identity = None
        self.client_context = None
        self.tenant_id = None
        self._deadline_ms = int(request["deadline_ms"])

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))


def _json_default(value: Any) -> Any:
    # The managed Python runtime serializes Decimal too (DynamoDB items are full of them).
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _error(request_id: str, error_type: str, message: str, stack: list[str] | None = None) -> str:
    return json.dumps(
        {"errorMessage": message, "errorType": error_type, "requestId": request_id, "stackTrace": stack or []}
    )


class Sandbox:
    """Imports the handler on first use and calls it; keeps the module between invocations."""

    def __init__(self, handler_spec: str) -> None:
        self.handler_spec = handler_spec
        self.handler: Any = None
        self.init_failure: _ImportFailure | None = None

    def init(self) -> None:
        """The init phase: import the handler before the first event, remembering a failure for the invoke."""
        try:
            self._load()
        except _ImportFailure as failure:
            self.init_failure = failure

    def _load(self) -> None:
        module_name, _, function_name = self.handler_spec.rpartition(".")
        if not module_name:
            raise _ImportFailure("Runtime.MalformedHandlerName", f"Bad handler '{self.handler_spec}'")
        try:
            module = importlib.import_module(module_name.replace("/", "."))
        except Exception as exc:  # any import-time failure is the function's fault, reported like AWS does
            raise _ImportFailure(
                "Runtime.ImportModuleError",
                f"Unable to import module '{module_name}': {exc}",
                traceback.format_exception(exc),
            ) from exc
        handler = getattr(module, function_name, None)
        if handler is None:
            raise _ImportFailure(
                "Runtime.HandlerNotFound", f"Handler '{function_name}' missing on module '{module_name}'"
            )
        self.handler = handler

    def invoke(self, request: dict[str, Any]) -> tuple[bool, str]:
        request_id = request["request_id"]
        failure = self.init_failure
        if failure is not None:
            return False, _error(request_id, failure.error_type, failure.message, failure.stack)
        try:
            event = json.loads(request["payload"]) if request["payload"] else {}
        except ValueError as exc:
            return False, _error(request_id, "Runtime.UnmarshalError", f"Unable to parse event: {exc}")
        os.environ["_X_AMZN_TRACE_ID"] = request.get("trace_id") or ""
        try:
            result = self.handler(event, LambdaContext(request))
        except Exception as exc:
            stack = traceback.format_list(traceback.extract_tb(exc.__traceback__)[1:])
            return False, _error(request_id, type(exc).__name__, str(exc), stack)
        try:
            return True, json.dumps(result, default=_json_default)
        except (TypeError, ValueError) as exc:
            return False, _error(request_id, "Runtime.MarshalError", f"Unable to marshal response: {exc}")


class _ImportFailure(Exception):
    def __init__(self, error_type: str, message: str, stack: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.stack = stack or []


class CapturedOutput:
    """Points fds 1 and 2 at a temporary file for the duration of one invocation."""

    def __init__(self) -> None:
        self._saved = (os.dup(1), os.dup(2))

    def __enter__(self) -> CapturedOutput:
        sys.stdout.flush()
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        os.dup2(self._file.fileno(), 1)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self._saved[0], 1)
        os.dup2(self._saved[1], 2)

    def text(self) -> str:
        self._file.seek(0)
        data = self._file.read().decode("utf-8", errors="replace")
        self._file.close()
        return data


def _exit_when_orphaned(parent_pid: int) -> None:
    # The request pipe reports EOF only between invocations; a handler stuck in a loop dies with LocalStack.
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


def _prepare_sys_path() -> None:
    # sys.path[0] is this script's folder; the function code takes its place, as /var/task does on AWS.
    code_dir = os.environ["LAMBDA_TASK_ROOT"]
    sys.path[0] = code_dir
    layer_paths = [p for p in os.environ.get("HOST_LAMBDA_LAYER_PATHS", "").split(os.pathsep) if p]
    if os.environ.get("HOST_LAMBDA_LAYERS", "append") == "prepend":
        sys.path[1:1] = layer_paths
    else:
        # Layers hold packages built for the cloud runtime; the host venv's own build of a package wins.
        sys.path.extend(layer_paths)
    os.chdir(code_dir)


def main() -> None:
    request_fd, response_fd = (int(fd) for fd in os.environ.pop("HOST_LAMBDA_PIPE_FDS").split(","))
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    _prepare_sys_path()
    # Keep the order of print() and raw fd writes in the logs, as the managed runtime does.
    sys.stdout.reconfigure(line_buffering=True)
    sandbox = Sandbox(os.environ["_HANDLER"])
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    responses = os.fdopen(response_fd, "w", encoding="utf-8")
    capture = CapturedOutput()
    with capture:
        sandbox.init()
    # Like the runtime API's "init done": the executor times invocations only from here on.
    responses.write(json.dumps({"ready": True, "logs": capture.text()}) + "\n")
    responses.flush()
    for line in requests:
        request = json.loads(line)
        with capture:
            ok, payload = sandbox.invoke(request)
        responses.write(json.dumps({"ok": ok, "payload": payload, "logs": capture.text()}) + "\n")
        responses.flush()


if __name__ == "__main__":
    main()

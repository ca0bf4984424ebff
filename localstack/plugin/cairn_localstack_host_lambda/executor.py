"""LocalStack ``RuntimeExecutor`` that runs each execution environment as a host Python process.

LocalStack's Docker executor starts a container whose init calls back into LocalStack; here ``invoke``
writes the invocation to a ``worker.py`` process over a pipe and blocks on the answer, so no callback endpoint
is needed. Timeouts and crashes are turned into the error payloads AWS returns, and the environment restarts
its worker on the next invocation.

Settings (environment of the LocalStack process):
- ``HOST_LAMBDA_PYTHON``: interpreter for handlers (default: LocalStack's own: the venv with our project).
- ``HOST_LAMBDA_LAYERS``: ``append`` (default; layer folders after site-packages), ``prepend`` (AWS order) or
  ``ignore``.
- ``HOST_LAMBDA_INIT_TIMEOUT``: seconds a worker may take to import the handler (default 30).
- ``HOST_LAMBDA_PID_DIR``: folder where worker pids are recorded so a supervisor can end them by id.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from localstack.aws.api.lambda_ import PackageType
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import LambdaRuntimeException, RuntimeExecutor

from localstack import config

LOG = logging.getLogger(__name__)

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
# Variables of the host worth keeping; everything else the function sees comes from LocalStack's Lambda env.
HOST_ENV_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
# AWS allows 10 s of init; a shared 2-core host importing onnxruntime needs more head-room.
INIT_SECONDS = float(os.environ.get("HOST_LAMBDA_INIT_TIMEOUT", "30"))
KEPT_LOG_ENTRIES = 50


def _code_dirs(function_version: FunctionVersion) -> tuple[Path, list[Path]]:
    code = function_version.config.code
    layers = [
        layer.code.get_unzipped_code_location() for layer in function_version.config.layers if layer.code
    ]
    return code.get_unzipped_code_location(), layers


def _layer_paths(layer_dirs: list[Path]) -> list[str]:
    # The same folders the managed runtime puts on sys.path from /opt.
    paths: list[str] = []
    for layer_dir in layer_dirs:
        paths.append(str(layer_dir / "python"))
        paths.extend(sorted(glob.glob(str(layer_dir / "python" / "lib" / "python3*" / "site-packages"))))
    return paths


class HostRuntimeExecutor(RuntimeExecutor):
    """One execution environment = one long-lived worker process, restarted after a timeout or crash."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:  # noqa: A002 (LocalStack's signature)
        super().__init__(id=id, function_version=function_version)
        self._env: dict[str, str] = {}
        self._process: subprocess.Popen | None = None
        self._requests = None
        self._responses = None
        self._logs: deque[str] = deque(maxlen=KEPT_LOG_ENTRIES)
        self._init_logs = ""
        self._init_ms: float | None = None
        self._lock = threading.Lock()

    # lifecycle
    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        cfg = function_version.config
        if cfg.package_type != PackageType.Zip or not cfg.code:
            raise LambdaRuntimeException("The host executor runs zip packages only, not container images.")
        if not (cfg.runtime or "").startswith("python"):
            raise LambdaRuntimeException(f"The host executor runs Python functions only, not {cfg.runtime}.")
        cfg.code.prepare_for_execution()
        for layer in cfg.layers:
            if layer.code:
                layer.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        # LocalStack's code objects own the unzipped folders and delete them themselves.
        return None

    def start(self, env_vars: dict[str, str]) -> None:
        code_dir, layer_dirs = _code_dirs(self.function_version)
        env = {key: os.environ[key] for key in HOST_ENV_KEPT if key in os.environ}
        env.update({key: str(value) for key, value in env_vars.items() if value is not None})
        env["LAMBDA_TASK_ROOT"] = str(code_dir)
        env["LAMBDA_RUNTIME_DIR"] = str(WORKER_SCRIPT.parent)
        env["AWS_EXECUTION_ENV"] = f"AWS_Lambda_{self.function_version.config.runtime}"
        env["PYTHONUNBUFFERED"] = "1"
        layer_mode = os.environ.get("HOST_LAMBDA_LAYERS", "append")
        env["HOST_LAMBDA_LAYERS"] = layer_mode
        env["HOST_LAMBDA_LAYER_PATHS"] = (
            "" if layer_mode == "ignore" else os.pathsep.join(_layer_paths(layer_dirs))
        )
        self._env = env
        # Fail at start (like a broken container) rather than at the first invoke when the code is missing.
        if not code_dir.is_dir():
            raise LambdaRuntimeException(f"Function code folder {code_dir} does not exist")
        self._spawn()

    def stop(self) -> None:
        with self._lock:
            self._kill()

    # addresses (only used for env vars: the handler reaches LocalStack over loopback)
    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return f"http://127.0.0.1:{config.GATEWAY_LISTEN[0].port}/_localstack_lambda/{self.id}"

    def get_logs(self) -> str:
        return "".join(self._logs)

    # invocation
    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        request_id = payload["invoke-id"]
        timeout = float(self.function_version.config.timeout)
        started = time.monotonic()
        request = {
            "request_id": request_id,
            "invoked_function_arn": payload.get("invoked-function-arn", ""),
            "payload": payload.get("payload", ""),
            "trace_id": payload.get("trace-id", ""),
            "deadline_ms": int(time.time() * 1000 + timeout * 1000),
        }
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                try:
                    self._spawn()
                except LambdaRuntimeException as exc:
                    error = {
                        "errorType": "Runtime.InitError",
                        "errorMessage": f"RequestId: {request_id} {exc}",
                    }
                    return InvocationResult(
                        request_id, json.dumps(error).encode(), is_error=True, logs=str(exc)
                    )
            ok, body, logs = self._exchange(request, timeout)
            logs, self._init_logs = self._init_logs + logs, ""
            init_ms, self._init_ms = self._init_ms, None
        elapsed_ms = (time.monotonic() - started) * 1000
        logs = (
            f"START RequestId: {request_id} Version: {self.function_version.id.qualifier}\n{logs}"
            f"END RequestId: {request_id}\n"
            f"REPORT RequestId: {request_id}\tDuration: {elapsed_ms:.2f} ms\t"
            f"Memory Size: {self.function_version.config.memory_size} MB"
            + (f"\tInit Duration: {init_ms:.2f} ms\n" if init_ms is not None else "\n")
        )
        self._logs.append(logs)
        return InvocationResult(request_id=request_id, payload=body.encode(), is_error=not ok, logs=logs)

    def _exchange(self, request: dict, timeout: float) -> tuple[bool, str, str]:
        request_id = request["request_id"]
        try:
            self._requests.write(json.dumps(request) + "\n")
            self._requests.flush()
        except (BrokenPipeError, OSError):
            return False, self._exit_error(request_id), ""
        ready, _, _ = select.select([self._responses], [], [], timeout)
        if not ready:
            self._kill()
            message = f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds"
            return False, json.dumps({"errorType": "Sandbox.Timedout", "errorMessage": message}), ""
        line = self._responses.readline()
        if not line:
            return False, self._exit_error(request_id), ""
        answer = json.loads(line)
        return bool(answer["ok"]), answer["payload"], answer.get("logs", "")

    def _exit_error(self, request_id: str) -> str:
        try:
            code = self._process.wait(timeout=5) if self._process else None
        except subprocess.TimeoutExpired:
            code = None
        self._kill()
        message = f"RequestId: {request_id} Error: Runtime exited with error: exit status {code}"
        return json.dumps({"errorType": "Runtime.ExitError", "errorMessage": message})

    # worker process
    def _spawn(self) -> None:
        """Start a worker and wait for the end of its init phase (the handler import)."""
        self._kill()
        spawned = time.monotonic()
        request_read, request_write = os.pipe()
        response_read, response_write = os.pipe()
        env = dict(self._env, HOST_LAMBDA_PIPE_FDS=f"{request_read},{response_write}")
        python = os.environ.get("HOST_LAMBDA_PYTHON") or sys.executable
        log_file = self._worker_log_file()
        self._process = subprocess.Popen(
            [python, str(WORKER_SCRIPT)],
            env=env,
            cwd=env["LAMBDA_TASK_ROOT"],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            pass_fds=(request_read, response_write),
            # Own process group: stop() ends the handler's own children too.
            start_new_session=True,
            close_fds=True,
        )
        if log_file not in (None, subprocess.DEVNULL):
            log_file.close()
        os.close(request_read)
        os.close(response_write)
        self._requests = os.fdopen(request_write, "w", encoding="utf-8")
        self._responses = os.fdopen(response_read, "r", encoding="utf-8")
        self._record_pid(self._process.pid)
        ready, _, _ = select.select([self._responses], [], [], INIT_SECONDS)
        line = self._responses.readline() if ready else ""
        if not line:
            self._kill()
            raise LambdaRuntimeException(
                f"Host worker for {self.function_version.qualified_arn} did not finish its init within "
                f"{INIT_SECONDS:.0f} s (HOST_LAMBDA_INIT_TIMEOUT) or exited; see HOST_LAMBDA_LOG_DIR"
            )
        self._init_logs = json.loads(line).get("logs", "")
        self._init_ms = (time.monotonic() - spawned) * 1000
        LOG.debug("Started host worker %s for %s", self._process.pid, self.function_version.qualified_arn)

    def _kill(self) -> None:
        process, self._process = self._process, None
        for stream in (self._requests, self._responses):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._requests = self._responses = None
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            LOG.warning("Host worker %s did not exit after SIGKILL", process.pid)
        self._forget_pid(process.pid)

    def _worker_log_file(self):
        # Output outside invocations (crashes of the interpreter itself) goes to LocalStack's log folder.
        log_dir = os.environ.get("HOST_LAMBDA_LOG_DIR")
        if not log_dir:
            return subprocess.DEVNULL
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        return open(Path(log_dir) / f"{self.function_version.id.function_name}-{self.id}.log", "ab")  # noqa: SIM115

    @staticmethod
    def _record_pid(pid: int) -> None:
        pid_dir = os.environ.get("HOST_LAMBDA_PID_DIR")
        if pid_dir:
            Path(pid_dir).mkdir(parents=True, exist_ok=True)
            (Path(pid_dir) / str(pid)).write_text(str(WORKER_SCRIPT))

    @staticmethod
    def _forget_pid(pid: int) -> None:
        pid_dir = os.environ.get("HOST_LAMBDA_PID_DIR")
        if pid_dir:
            (Path(pid_dir) / str(pid)).unlink(missing_ok=True)

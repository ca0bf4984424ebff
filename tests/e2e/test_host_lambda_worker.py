"""The host Lambda worker process on its own (no LocalStack): protocol, warm state, error shapes, log capture.

These run in the default suite (marker ``integration``): they only start ``worker.py`` with our Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

WORKER = (
    Path(__file__).resolve().parents[2]
    / "localstack"
    / "plugin"
    / "cairn_localstack_host_lambda"
    / "worker.py"
)

HANDLER = """
import os
import sys

STATE = {"calls": 0}
print("imported once")


def handler(event, context):
    STATE["calls"] += 1
    print("stdout line", event.get("n"))
    os.write(2, b"raw stderr line\\n")
    if event.get("raise"):
        raise KeyError("missing")
    if event.get("exit"):
        sys.exit(3)
    if event.get("unserializable"):
        return {"value": object()}
    return {"calls": STATE["calls"], "request_id": context.aws_request_id, "cwd": os.getcwd(),
            "remaining_ok": 0 < context.get_remaining_time_in_millis() <= 5000}
"""


class Worker:
    def __init__(self, code_dir: Path, handler: str) -> None:
        request_read, self._request_write = os.pipe()
        self._response_read, response_write = os.pipe()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "_HANDLER": handler,
            "LAMBDA_TASK_ROOT": str(code_dir),
            "AWS_LAMBDA_FUNCTION_NAME": "fn",
            "HOST_LAMBDA_PIPE_FDS": f"{request_read},{response_write}",
        }
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)],
            env=env,
            pass_fds=(request_read, response_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(request_read)
        os.close(response_write)
        self.requests = os.fdopen(self._request_write, "w")
        self.responses = os.fdopen(self._response_read, "r")
        ready = json.loads(self.responses.readline())
        assert ready["ready"] is True
        self.init_logs = ready["logs"]

    def invoke(self, event: dict | str, request_id: str = "r1") -> dict | None:
        payload = event if isinstance(event, str) else json.dumps(event)
        request = {
            "request_id": request_id,
            "payload": payload,
            "deadline_ms": int(time.time() * 1000) + 5000,
        }
        self.requests.write(json.dumps(request) + "\n")
        self.requests.flush()
        line = self.responses.readline()
        return json.loads(line) if line else None

    def close(self) -> None:
        self.requests.close()
        self.process.wait(timeout=10)
        self.responses.close()


@pytest.fixture
def worker(tmp_path):
    (tmp_path / "app.py").write_text(HANDLER)
    w = Worker(tmp_path, "app.handler")
    yield w
    if w.process.poll() is None:
        w.close()


def test_worker_returns_the_handler_result_and_keeps_module_state_between_calls(worker, tmp_path):
    first = worker.invoke({"n": 1}, request_id="req-1")
    second = worker.invoke({"n": 2}, request_id="req-2")

    assert first["ok"] and second["ok"]
    body = json.loads(second["payload"])
    assert body == {"calls": 2, "request_id": "req-2", "cwd": str(tmp_path), "remaining_ok": True}


def test_worker_imports_the_handler_before_the_first_event_and_reports_its_output(worker):
    assert worker.init_logs == "imported once\n"


def test_worker_captures_print_and_raw_fd_output_as_the_invocation_logs(worker):
    first = worker.invoke({"n": 1})
    second = worker.invoke({"n": 2})

    assert first["logs"] == "stdout line 1\nraw stderr line\n"
    assert second["logs"] == "stdout line 2\nraw stderr line\n"


def test_handler_exception_becomes_an_aws_shaped_error(worker):
    answer = worker.invoke({"raise": True}, request_id="req-9")

    assert answer["ok"] is False
    error = json.loads(answer["payload"])
    assert error["errorType"] == "KeyError"
    assert error["errorMessage"] == "'missing'"
    assert error["requestId"] == "req-9"
    assert any("app.py" in frame for frame in error["stackTrace"])


def test_unserializable_result_is_a_marshal_error(worker):
    error = json.loads(worker.invoke({"unserializable": True})["payload"])

    assert error["errorType"] == "Runtime.MarshalError"


def test_invalid_event_json_is_an_unmarshal_error_not_a_crash(worker):
    answer = worker.invoke("{not json")

    assert json.loads(answer["payload"])["errorType"] == "Runtime.UnmarshalError"
    assert worker.invoke({"n": 1})["ok"]


def test_handler_calling_exit_ends_the_worker_so_the_executor_sees_eof(worker):
    assert worker.invoke({"exit": True}) is None
    assert worker.process.wait(timeout=10) == 3


def test_missing_module_is_an_import_error_reported_on_every_invocation(tmp_path):
    w = Worker(tmp_path, "nowhere.handler")
    try:
        for _ in range(2):
            error = json.loads(w.invoke({})["payload"])
            assert error["errorType"] == "Runtime.ImportModuleError"
            assert "nowhere" in error["errorMessage"]
    finally:
        w.close()


def test_module_raising_at_import_is_an_import_error_with_its_output_in_init_logs(tmp_path):
    (tmp_path / "bad.py").write_text("print('half way')\nraise RuntimeError('no config')\n")
    w = Worker(tmp_path, "bad.handler")
    try:
        assert w.init_logs == "half way\n"
        error = json.loads(w.invoke({})["payload"])
        assert error["errorType"] == "Runtime.ImportModuleError"
        assert "no config" in error["errorMessage"]
    finally:
        w.close()


def test_missing_handler_function_is_reported(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    w = Worker(tmp_path, "app.handler")
    try:
        assert json.loads(w.invoke({})["payload"])["errorType"] == "Runtime.HandlerNotFound"
    finally:
        w.close()


def test_worker_exits_when_its_request_pipe_closes(worker):
    worker.invoke({"n": 1})
    worker.requests.close()

    assert worker.process.wait(timeout=10) == 0

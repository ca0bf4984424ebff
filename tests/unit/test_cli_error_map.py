"""The CLI's one map from error types to the line the user sees, and the client's typed errors."""

import json

import httpx
import pytest
from cairn.cli.client import CairnClient
from cairn.cli.errors import ApiError, NotCairn, explain
from cairn.domain.errors import NotFound

pytestmark = pytest.mark.unit
REQ = httpx.Request("GET", "http://127.0.0.1:8787/v1/health")


def test_a_refused_connection_names_the_server_and_the_fix():
    exc = httpx.ConnectError("[Errno 111] Connection refused", request=REQ)
    assert (
        explain(exc)
        == "cannot reach Cairn at http://127.0.0.1:8787 — is `cairn serve` running? (or pass --url)"
    )


def test_a_timeout_says_the_server_did_not_answer():
    assert "did not answer in time" in explain(httpx.ReadTimeout("timed out", request=REQ))


def test_server_errors_carry_the_servers_message_and_a_hint_by_status():
    assert explain(ApiError(404, "not_found", "no memory mem_x")) == "no memory mem_x (404 not_found)"
    assert "--key" in explain(ApiError(401, "unauthenticated", "invalid API key"))
    assert "admin key" in explain(ApiError(403, "forbidden", "needs admin"))
    assert "server's log" in explain(ApiError(500, "internal", "internal error"))


def test_file_errors_name_the_file():
    assert explain(FileNotFoundError(2, "No such file", "/x/y.jsonl")) == "no such file or folder: /x/y.jsonl"
    assert (
        explain(PermissionError(13, "Permission denied", "/etc/shadow")) == "permission denied: /etc/shadow"
    )
    assert explain(IsADirectoryError(21, "Is a directory", "/tmp")) == "/tmp is a folder, not a file"


def test_json_and_domain_errors_are_one_line():
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads("{nope")
    assert explain(caught.value).startswith("not valid JSON (line 1")
    assert explain(NotFound("no session s-1")) == "no session s-1"


def test_an_unexpected_error_is_still_one_line_naming_its_type():
    line = explain(ZeroDivisionError("division by zero\nsecond line"))
    assert line == "unexpected ZeroDivisionError: division by zero (CAIRN_DEBUG=1 shows the traceback)"


def test_a_server_that_answers_html_is_not_cairn(monkeypatch, tmp_path):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    html = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>router login</html>"))
    client = CairnClient("http://192.0.2.1", "k", transport=html)
    with pytest.raises(NotCairn) as caught:
        client.request("GET", "/v1/health")
    assert "did not answer like Cairn" in explain(caught.value) and "http://192.0.2.1" in explain(
        caught.value
    )


def test_an_error_status_without_cairns_error_body_keeps_the_text_on_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    proxy = httpx.MockTransport(lambda request: httpx.Response(502, text="Bad\n  Gateway\n"))
    with pytest.raises(ApiError) as caught:
        CairnClient("http://192.0.2.1", "k", transport=proxy).request("GET", "/v1/health")
    assert explain(caught.value) == "Bad Gateway (502 http_error) — see the server's log"

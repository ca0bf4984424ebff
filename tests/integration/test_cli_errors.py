"""Bad input and a down server get one `error:` line with the fix and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from cairn.cli.main import app
from typer.testing import CliRunner

from tests.integration.capture_helpers import closed_port_url, hook_env
from tests.integration.pipeline_helpers import claude_transcript

pytestmark = pytest.mark.integration

runner = CliRunner()


@pytest.fixture
def down(tmp_path, monkeypatch):
    """The CLI pointed at a port nothing listens on."""
    url = closed_port_url()
    for name in ("CAIRN_URL", "CAIRN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_URL", url)
    monkeypatch.setenv("CAIRN_API_KEY", "cairn_test")
    return url


def one_error_line(result) -> str:
    """The single line the CLI printed on stderr (asserting there was nothing else)."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["recall", "anything"],
        ["remember", "a fact", "--project", "p"],
        ["sessions"],
        ["apikey", "list"],
        ["apikey", "create", "--member", "bob"],
        ["export"],
        ["forget", "mem_x"],
        ["reprocess", "s-1"],
        ["list"],
        ["show", "mem_x"],
    ],
    ids=lambda a: " ".join(a),
)
def test_every_command_says_in_one_line_that_the_server_cannot_be_reached(down, args):
    line = one_error_line(runner.invoke(app, args))
    assert line == f"error: cannot reach Cairn at {down} — is `cairn serve` running? (or pass --url)"


def test_import_with_the_server_down_says_it_cannot_reach_it(down, tmp_path):
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"type": "memory", "record": {}}\n')
    assert "cannot reach Cairn" in one_error_line(runner.invoke(app, ["import", str(dump)]))


def test_ingest_with_the_server_down_says_it_cannot_reach_it(down, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(claude_transcript("down-1", [("user", "Use Redis for the job queue.")]))
    line = one_error_line(runner.invoke(app, ["ingest", str(path), "--project", "p"]))
    assert line.startswith(f"error: cannot reach Cairn at {down}")


@pytest.mark.parametrize("bad", ["notaurl", "ftp://example.com", "http://"])
def test_a_url_that_is_not_http_is_refused_in_one_line(down, bad):
    line = one_error_line(runner.invoke(app, ["status", "--url", bad]))
    assert line == f"error: --url {bad!r} is not an http(s) URL"


def test_a_bad_cairn_url_in_the_environment_is_named_as_such(down, monkeypatch):
    monkeypatch.setenv("CAIRN_URL", "localhost:8787")
    assert (
        one_error_line(runner.invoke(app, ["list"]))
        == "error: CAIRN_URL 'localhost:8787' is not an http(s) URL"
    )


def test_export_over_an_existing_backup_with_the_server_down_leaves_the_backup_whole(down, tmp_path):
    backup = tmp_path / "backup.jsonl"
    backup.write_text('{"type": "memory"}\n' * 3)
    line = one_error_line(runner.invoke(app, ["export", str(backup)]))
    assert "cannot reach Cairn" in line
    assert backup.read_text() == '{"type": "memory"}\n' * 3
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_export_to_a_missing_folder_names_the_folder(down, tmp_path):
    target = tmp_path / "nope" / "backup.jsonl"
    line = one_error_line(runner.invoke(app, ["export", str(target)]))
    assert line == f"error: cannot write {target}: the folder {target.parent} does not exist"


def test_export_to_a_folder_asks_for_a_file_name(down, tmp_path):
    assert "is a folder" in one_error_line(runner.invoke(app, ["export", str(tmp_path)]))


def test_importing_a_binary_file_says_it_is_not_an_export(down, tmp_path):
    blob = tmp_path / "photo.jsonl"
    blob.write_bytes(bytes(range(256)) * 4)
    line = one_error_line(runner.invoke(app, ["import", str(blob)]))
    assert line == f"error: {blob} is not a `cairn export` file: it is not UTF-8 text"


def test_importing_text_that_is_not_json_lines_names_the_line(down, tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"type": "memory", "record": {}}\n\nhello\n')
    line = one_error_line(runner.invoke(app, ["import", str(notes)]))
    assert line == f"error: {notes} is not a `cairn export` file: line 3 is not a JSON object"


def test_importing_a_missing_file_or_a_folder_says_which(down, tmp_path):
    assert "no such file" in one_error_line(runner.invoke(app, ["import", str(tmp_path / "gone.jsonl")]))
    assert "is a folder" in one_error_line(runner.invoke(app, ["import", str(tmp_path)]))


def test_ingesting_a_folder_asks_for_a_transcript_file(down, tmp_path):
    line = one_error_line(runner.invoke(app, ["ingest", str(tmp_path)]))
    assert line == (
        f"error: {tmp_path} is a folder, not a session's folder (no {tmp_path.name}.jsonl beside it); "
        "give a transcript file (.jsonl, .jsonl.gz or .jsonl.zst)"
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"# Cairn\n\nA README, not a transcript.\n", "no line is a JSON object"),
        (b"", "is empty"),
        (b'{"a":1}\n', "not in Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI or Cursor format"),
        (b"\x00\x01\x02\xff" * 64, "no line is a JSON object"),
    ],
    ids=["markdown", "empty", "json-object", "binary"],
)
def test_ingest_refuses_a_file_that_is_not_a_transcript_before_uploading(down, tmp_path, content, says):
    path = tmp_path / "README.md"
    path.write_bytes(content)
    line = one_error_line(runner.invoke(app, ["ingest", str(path), "--project", "p"]))
    assert says in line and str(path) in line and "cannot reach" not in line


def test_ingest_refuses_a_transcript_with_no_conversation(down, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "summary", "summary": "x", "leafUuid": "u1"}) + "\n")
    line = one_error_line(runner.invoke(app, ["ingest", str(path), "--project", "p"]))
    assert "has no conversation to learn from" in line


def test_ingest_refuses_an_unknown_agent_name(down, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(claude_transcript("a-1", [("user", "hello there")]))
    line = one_error_line(runner.invoke(app, ["ingest", str(path), "--agent", "vim"]))
    assert "--agent 'vim'" in line


def test_ingest_of_a_transcript_from_an_unknown_machine_without_a_folder_asks_for_project(down, tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [json.loads(ln) for ln in claude_transcript("nocwd", [("user", "hello there")]).splitlines()]
    path.write_text("".join(json.dumps({k: v for k, v in o.items() if k != "cwd"}) + "\n" for o in lines))
    line = one_error_line(runner.invoke(app, ["ingest", str(path)]))
    assert line == f"error: {path} does not say which folder it was recorded in; pass --project"


def test_a_bad_option_value_is_one_line_naming_the_help(down):
    result = runner.invoke(app, ["remember", "x", "--kind", "opinion"])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "'opinion' is not a kind; one of: preference, fact, pattern" in line and "--help" in line


def test_serve_on_a_busy_port_fails_in_one_line_before_claiming_to_serve(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = hook_env(tmp_path / "home", "http://127.0.0.1:1", "k")
        proc = subprocess.run(
            [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip() == (
        f"error: port {port} is in use — is another `cairn serve` running? (`--port` to pick another)"
    )
    assert not (tmp_path / "home" / "cairn.db").exists()

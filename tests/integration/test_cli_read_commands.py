"""`--json` on every read command prints the API's JSON; list/show show everything; ids are never cut;
ingest --wait shows the pipeline's stages; the server logs one line per failed request."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import httpx
import pytest
from cairn.cli.main import app
from typer.testing import CliRunner

from tests.integration.capture_helpers import hook_env
from tests.integration.pipeline_helpers import claude_transcript

pytestmark = [pytest.mark.integration, pytest.mark.slow]

runner = CliRunner()


@pytest.fixture
def cli(module_server, tmp_path, monkeypatch):
    for name in ("CAIRN_URL", "CAIRN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cli-home"))
    monkeypatch.setenv("CAIRN_URL", module_server.url)
    monkeypatch.setenv("CAIRN_API_KEY", module_server.key)

    def run(*args: str, code: int = 0):
        result = runner.invoke(app, list(args))
        assert result.exit_code == code, result.output
        return result

    return run


def doc(result):
    """stdout is exactly one JSON document."""
    return json.loads(result.stdout)


def remember(cli, content: str, project: str = "cli-p", *extra: str) -> dict:
    return doc(cli("remember", content, "--project", project, "--json", *extra))


def test_remember_json_is_the_stored_memory(cli):
    m = remember(cli, "The staging database is Postgres 16", "cli-p", "--kind", "fact", "-t", "db")
    assert m["id"].startswith("mem_") and m["kind"] == "fact" and m["tags"] == ["db"]
    assert {"provenance", "superseded_by", "valid_to", "access_count", "details"} <= m.keys()


def test_status_json_has_the_server_health_identity_and_project(cli, module_server):
    d = doc(cli("status", "--json"))
    assert set(d) == {"url", "health", "whoami", "project"}
    assert d["url"] == module_server.url and d["health"]["status"] == "ok"
    assert d["whoami"]["team_id"] == module_server.team_id and "admin" in d["whoami"]["scopes"]


def test_recall_json_is_the_search_reply(cli):
    remember(cli, "Payments stub listens on port 9100", "recall-p")
    d = doc(cli("recall", "payments stub port", "--project", "recall-p", "--json"))
    assert set(d) == {"hits", "degraded"}
    hit = d["hits"][0]
    assert {"memory", "score", "lexical_rank", "semantic_rank", "via"} <= hit.keys()
    assert hit["memory"]["content"] == "Payments stub listens on port 9100"


def test_list_json_is_one_page_with_its_cursor_and_all_follows_every_cursor(cli):
    made = [remember(cli, f"paging fact number {i}", "page-p")["id"] for i in range(5)]
    first = doc(cli("list", "--project", "page-p", "--limit", "2", "--json"))
    assert set(first) == {"items", "next_cursor"} and len(first["items"]) == 2 and first["next_cursor"]
    second = doc(
        cli("list", "--project", "page-p", "--limit", "2", "--cursor", first["next_cursor"], "--json")
    )
    assert not {m["id"] for m in first["items"]} & {m["id"] for m in second["items"]}
    every = doc(cli("list", "--project", "page-p", "--limit", "2", "--all", "--json"))
    assert sorted(m["id"] for m in every["items"]) == sorted(made) and every["next_cursor"] is None


def test_list_filters_like_the_api(cli):
    remember(cli, "Prefer tabs in Makefiles", "filter-p", "--kind", "preference", "-t", "style")
    remember(cli, "Deploys happen on Tuesdays", "filter-p", "--kind", "decision")
    prefs = doc(cli("list", "--project", "filter-p", "--kind", "preference", "--json"))["items"]
    assert [m["content"] for m in prefs] == ["Prefer tabs in Makefiles"]
    tagged = doc(cli("list", "--project", "filter-p", "--tag", "style", "--json"))["items"]
    assert [m["kind"] for m in tagged] == ["preference"]
    team = doc(cli("list", "--scope", "team", "--project", "filter-p", "--json"))["items"]
    assert all(m["scope"] == "team" for m in team)


def test_show_prints_everything_about_a_memory_and_json_has_memory_relations_and_history(cli, module_server):
    old = remember(cli, "CI runs on Jenkins", "show-p")
    other = remember(cli, "Builds take 12 minutes", "show-p")
    headers = {"Authorization": f"Bearer {module_server.key}"}
    body = {**{k: old[k] for k in ("kind", "scope", "project")}, "content": "CI runs on GitHub Actions"}
    new = httpx.post(
        f"{module_server.url}/v1/memories/{old['id']}/supersede", json=body, headers=headers
    ).json()
    new_id = new["memory"]["id"]
    rel = {"source_id": new_id, "predicate": "relates-to", "target_id": other["id"]}
    assert httpx.post(f"{module_server.url}/v1/relations", json=rel, headers=headers).status_code == 201

    d = doc(cli("show", new_id, "--json"))
    assert set(d) == {"memory", "relations", "history"} and d["memory"]["id"] == new_id
    assert [e["action"] for e in d["history"]] == ["relate", "write"]  # newest first; the supersede wrote it
    assert ("relates-to", other["id"]) in {(r["predicate"], r["target_id"]) for r in d["relations"]}

    text = cli("show", old["id"]).stdout
    assert f"superseded by {new_id}" in text and "CI runs on Jenkins" in text
    for label in ("kind", "scope", "project", "tags", "confidence", "pinned", "session", "transcript"):
        assert label in text
    assert "accessed" in text and "valid" in text
    assert "history" in text and "supersede" in text and f"superseded_by={new_id}" in text
    text = cli("show", new_id).stdout
    assert f"{new_id} -relates-to-> {other['id']}" in text

    listed = doc(cli("list", "--project", "show-p", "--json"))["items"]
    assert old["id"] not in {m["id"] for m in listed}
    listed = doc(cli("list", "--project", "show-p", "--include-superseded", "--json"))["items"]
    assert old["id"] in {m["id"] for m in listed}


def test_audit_lists_the_teams_trail_newest_first_and_by_target(cli):
    first = remember(cli, "Releases are cut on Fridays", "audit-p")
    cli("forget", first["id"])
    trail = doc(cli("audit", "--target", first["id"], "--json"))["items"]
    assert [e["action"] for e in trail] == ["forget", "write"]
    assert all(e["request_id"] and e["key_id"].startswith("key_") for e in trail)
    text = cli("audit", "--limit", "5").stdout
    assert first["id"] in text and "forget" in text


def test_show_of_an_unknown_memory_is_one_line_with_the_servers_reason(cli):
    result = cli("show", "mem_01aaaaaaaaaaaaaaaaaaaaaaaa", code=1)
    assert result.stderr.startswith("error: ") and "404" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_refused_key_says_how_to_fix_it(cli, monkeypatch):
    monkeypatch.setenv("CAIRN_API_KEY", "cairn_not-a-real-key")
    result = cli("list", code=1)
    assert "(401" in result.stderr and "--key" in result.stderr


def test_apikey_list_json_has_every_key_and_no_hash(cli):
    made = doc(cli("apikey", "create", "--member", "reader", "--scope", "read", "--json"))
    assert set(made) == {"key", "secret"} and made["secret"].startswith("cairn_")
    d = doc(cli("apikey", "list", "--json"))
    assert set(d) == {"items"}
    assert made["key"]["id"] in {k["id"] for k in d["items"]}
    assert all("key_hash" not in k for k in d["items"])


def test_a_key_created_for_a_project_works_there_and_is_refused_elsewhere_with_a_hint(cli, monkeypatch):
    made = doc(cli("apikey", "create", "--member", "bot", "--project", "cli-limited", "--json"))
    assert made["key"]["projects"] == ["cli-limited"]
    listed = cli("apikey", "list").stdout
    assert "cli-limited" in listed and "all projects" in listed
    monkeypatch.setenv("CAIRN_API_KEY", made["secret"])
    assert remember(cli, "the limited bot remembers this", "cli-limited")["project"] == "cli-limited"
    refused = cli("remember", "not here", "--kind", "fact", "--project", "cli-p", code=1)
    assert "(403 outside_projects)" in refused.stderr and "use a key for this project" in refused.stderr
    assert "limited to cli-limited" in cli("status").stdout


def test_sessions_json_and_ingest_wait_shows_each_stage(cli, module_server, tmp_path):
    path = tmp_path / "s.jsonl"
    turns = [("user", "We decided to use Redis for the job queue."), ("assistant", "Noted: Redis for jobs.")]
    path.write_bytes(claude_transcript("stages-1", turns, cwd="/nowhere/on/this/machine/shop"))
    result = cli("ingest", str(path), "--wait")
    assert "uploaded session stages-1 (claude-code, project shop)" in result.stdout
    assert "filed under project shop" in result.stderr and "not on this machine" in result.stderr
    for stage in ("learned", "parse: ", "chunk: ", "extract: ", "consolidate: +", "reflect: "):
        assert stage in result.stderr
    assert result.stderr.index("parse: ") < result.stderr.index("consolidate: +")

    d = doc(cli("sessions", "--json"))
    assert set(d) == {"items", "next_cursor"}
    session = next(s for s in d["items"] if s["id"] == "stages-1")
    assert session["project"] == "shop" and session["status"] == "learned"


def test_text_is_cut_only_with_an_ellipsis_and_full_prints_it_whole(cli):
    long = "word " * 80 + "END"
    m = remember(cli, long, "cut-p")
    short = cli("list", "--project", "cut-p").stdout
    line = next(ln for ln in short.splitlines() if m["id"] in ln)
    assert line.endswith("…") and "END" not in line
    assert "END" in cli("list", "--project", "cut-p", "--full").stdout
    assert "END" in cli("recall", "word", "--project", "cut-p", "--full").stdout


def test_ids_are_whole_on_a_narrow_terminal(cli, module_server, tmp_path):
    m = remember(cli, "narrow terminals keep ids whole " * 5, "narrow-p")
    env = hook_env(tmp_path / "h", module_server.url, module_server.key, COLUMNS="40")
    for args in (["recall", "narrow terminals", "--project", "narrow-p"], ["apikey", "list"], ["list"]):
        proc = subprocess.run(
            [sys.executable, "-m", "cairn.cli.main", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        if args[0] != "apikey":
            assert m["id"] in proc.stdout
        else:
            listed = doc(cli("apikey", "list", "--json"))["items"]
            assert all(k["id"] in proc.stdout for k in listed)


def test_help_shows_every_kind_whole(cli):
    text = " ".join(cli("remember", "--help").stdout.split())
    for kind in (
        "preference",
        "fact",
        "pattern",
        "procedure",
        "decision",
        "episode",
        "reflection",
        "handoff",
    ):
        assert kind in text
    assert "…" not in text


def test_the_server_logs_one_line_per_failed_request(module_server, caplog):
    with caplog.at_level(logging.WARNING, logger="cairn.requests"):
        httpx.get(
            f"{module_server.url}/v1/memories/mem_nope",
            headers={"Authorization": f"Bearer {module_server.key}"},
        )
        httpx.get(f"{module_server.url}/v1/health")
    lines = [r.getMessage() for r in caplog.records if r.name == "cairn.requests"]
    assert lines == ["GET /v1/memories/mem_nope -> 400 'mem_nope' is not a valid mem id"]

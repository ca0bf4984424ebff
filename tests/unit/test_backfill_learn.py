"""How `cairn backfill` sends what it found: the hooks' uploads, secrets redacted, a 429 waited out, a
killed run resumed from its ledger, and the hooks told what was sent. The server is an httpx mock that
answers as Cairn's API and the local upload target do."""

from __future__ import annotations

import gzip
import json
import re

import httpx
import pytest
from cairn.capture import state
from cairn.capture.backfill import Api, learn, scan
from cairn.capture.ledger import Ledger
from cairn.capture.stores import Project

from tests.agent_stores import EXPECTED, PROJECT, lay_out, make_project

pytestmark = pytest.mark.unit
GITHUB_TOKEN = "ghp_9aZ3kQ7mN2pL5xR8vT1wY4bC6dF0gH2jK9sE"
AWS_KEY = "AKIAZ7QX2M4N8P6R3T5V"


class FakeServer:
    """POST /v1/uploads grants a PUT; the PUT stores the part; sessions are listed and read back."""

    def __init__(self, over_quota: int = 0, retry_after: str | None = "7") -> None:
        self.parts: dict[tuple[str, int], bytes] = {}
        self.over_quota, self.retry_after = over_quota, retry_after
        self.known: list[str] = []
        self.puts_before_crash: int | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/uploads":
            if self.over_quota:
                self.over_quota -= 1
                headers = {"Retry-After": self.retry_after} if self.retry_after else {}
                return httpx.Response(429, headers=headers, json={"error": {"message": "Too Many Requests"}})
            body = json.loads(request.content)
            url = f"http://127.0.0.1:9/put/{body['session_id']}/{body['part']}"
            return httpx.Response(201, json={"method": "PUT", "url": url, "headers": {}})
        if request.method == "PUT":
            if self.puts_before_crash is not None:
                if self.puts_before_crash == 0:
                    raise KeyboardInterrupt  # the process dies here, as under kill -9
                self.puts_before_crash -= 1
            _, _, session_id, part = path.split("/")
            self.parts[(session_id, int(part))] = request.content
            return httpx.Response(200, json={"stored": len(request.content)})
        if path == "/v1/sessions":
            return httpx.Response(200, json={"items": [{"id": i} for i in self.known], "next_cursor": None})
        session_id = path.rsplit("/", 1)[1]
        stats = {"consolidate": {"created": 1, "merged": 0}}
        return httpx.Response(200, json={"id": session_id, "status": "learned", "stats": stats})

    def sessions(self) -> list[str]:
        return list(dict.fromkeys(sid for sid, _ in self.parts))

    def text(self, session_id: str) -> str:
        parts = sorted((n, data) for (sid, n), data in self.parts.items() if sid == session_id)
        return b"".join(gzip.decompress(data) for _, data in parts).decode()


class Recorded:
    def __init__(self) -> None:
        self.waits: list[tuple[float, str]] = []
        self.outcomes = []
        self.slept: list[float] = []

    def sending(self, s, part, total) -> None:
        pass

    def waiting(self, seconds, why) -> None:
        self.waits.append((seconds, why))

    def finished(self, outcome) -> None:
        self.outcomes.append(outcome)


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "cairn"))
    project = make_project(tmp_path / "work" / "shop")
    home = lay_out(tmp_path / "home", project)
    plan = [(s, PROJECT) for s in scan(Project.of(project), home, {}).sessions]
    return plan, Ledger.for_server("http://cairn.test")


def run(plan, ledger, server: FakeServer, wait_s: float = 0.0) -> Recorded:
    seen = Recorded()
    api = Api("http://cairn.test", "ck_test", transport=httpx.MockTransport(server))
    learn(plan, api, ledger, seen, wait_s=wait_s, sleep=seen.slept.append)
    return seen


def test_each_session_is_sent_oldest_first_as_its_own_session_with_its_other_files_as_parts(world):
    plan, ledger = world
    server = FakeServer()
    seen = run(plan, ledger, server, wait_s=5)
    assert server.sessions() == [k.split(":", 1)[1] for k in EXPECTED]
    assert max(n for sid, n in server.parts if sid == "fe5e1c67-53e7-4862-81ae-d0e013e3270b") == 2
    assert "Create React components for the TODO app" in server.text("fe5e1c67-53e7-4862-81ae-d0e013e3270b")
    assert [o.how for o in seen.outcomes] == ["learned"] * len(EXPECTED)


def test_secrets_are_redacted_before_anything_leaves_the_machine(world):
    plan, ledger = world
    claude, _ = plan[0]
    sub = claude.others[0]
    claude.path.write_bytes(
        claude.path.read_bytes().replace(b"create TODO app", f"use {AWS_KEY} for".encode())
    )
    sub.write_bytes(sub.read_bytes().replace(b"Use TypeScript", f"GITHUB_TOKEN={GITHUB_TOKEN}".encode()))
    assert AWS_KEY.encode() in claude.path.read_bytes() and GITHUB_TOKEN.encode() in sub.read_bytes()
    server = FakeServer()
    run(plan[:1], ledger, server)
    sent = server.text(claude.session_id)
    assert "GITHUB_TOKEN=" in sent
    assert AWS_KEY not in sent and GITHUB_TOKEN not in sent


def test_a_429_is_waited_out_as_the_server_says_and_is_no_failure(world):
    plan, ledger = world
    server = FakeServer(over_quota=2, retry_after="7")
    seen = run(plan[:1], ledger, server)
    assert seen.slept == [7, 7]
    assert [w for w, _ in seen.waits] == [7, 7] and all("over quota" in why for _, why in seen.waits)
    assert [o.how for o in seen.outcomes] == ["sent"]


def test_a_429_without_retry_after_waits_a_default_and_retries(world):
    plan, ledger = world
    seen = run(plan[:1], ledger, FakeServer(over_quota=1, retry_after=None))
    assert seen.slept == [30] and [o.how for o in seen.outcomes] == ["sent"]


def test_a_run_killed_between_two_parts_resumes_at_the_part_the_server_did_not_acknowledge(world):
    plan, ledger = world
    server = FakeServer()
    server.puts_before_crash = 1  # part 1 of the first session is stored, then the process dies
    with pytest.raises(KeyboardInterrupt):
        run(plan, ledger, server)
    first = plan[0][0]
    assert ledger.get(first.key).parts == 1 and not ledger.get(first.key).done
    server.puts_before_crash = None
    sent_again = []
    original = server.__call__

    def counting(request):
        if request.method == "PUT":
            sent_again.append(request.url.path)
        return original(request)

    seen = Recorded()
    api = Api("http://cairn.test", "ck_test", transport=httpx.MockTransport(counting))
    learn(plan, api, Ledger.for_server("http://cairn.test"), seen, wait_s=0, sleep=seen.slept.append)
    assert sent_again[0] == f"/put/{first.session_id}/2"
    assert server.sessions() == [k.split(":", 1)[1] for k in EXPECTED]


def test_a_second_run_sends_nothing(world):
    plan, ledger = world
    server = FakeServer()
    run(plan, ledger, server)
    stored = dict(server.parts)
    seen = run(plan, Ledger.for_server("http://cairn.test"), server)
    assert server.parts == stored and {o.how for o in seen.outcomes} == {"done"}


def test_a_session_the_server_already_has_is_not_sent(world):
    plan, ledger = world
    server = FakeServer()
    server.known = [plan[0][0].session_id]
    seen = run(plan, ledger, server)
    assert plan[0][0].session_id not in server.sessions()
    assert seen.outcomes[0].how == "known"


def test_the_hooks_go_on_after_what_was_sent_when_a_session_is_resumed(world):
    plan, ledger = world
    run(plan[:1], ledger, FakeServer())
    claude = plan[0][0]
    st = state.load("claude-code", claude.session_id)
    assert st.project == PROJECT and st.next_part == 3
    assert st.offset == len(claude.path.read_bytes())
    assert st.subagent_offsets == {claude.others[0].name: claude.others[0].stat().st_size}


def test_the_ledger_is_one_small_json_file_replaced_whole(world):
    plan, ledger = world
    run(plan[:2], ledger, FakeServer())
    doc = json.loads(ledger.path.read_text())
    assert doc["url"] == "http://cairn.test"
    assert {k: (e["parts"], e["done"]) for k, e in doc["sessions"].items()} == {
        EXPECTED[0]: (2, True),
        EXPECTED[1]: (1, True),
    }
    assert not [p for p in ledger.path.parent.iterdir() if re.search(r"\.tmp$", p.name)]

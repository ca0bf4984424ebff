"""No secret reaches the blob store, the database or an embedding: hook → upload → pipeline, then grep."""

from __future__ import annotations

import pytest

from tests.integration.capture_helpers import hook_env, run_hook, wait_for_worker
from tests.integration.pipeline_helpers import bash_turns, claude_transcript

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRETS = {
    "aws": "AKIAZ7QX2M4N8P6R3T5V",
    "github": "ghp_9aZ3kQ7mN2pL5xR8vT1wY4bC6dF0gH2jK9sE",
    "anthropic": "sk-ant-api03-Zx9Qm3Lp7Rt2Vw5Yb8Nc1Kd4Fg6Hj0Ps3Ua7Ie9Ow2Qr5Ty8-AbCdEfGh",
    "password": "hunter2xyz9Q",
    "url_password": "S3cr3tPassw0rd",
}


def test_secrets_in_a_transcript_never_reach_the_server_side(tmp_path, server):
    turns = [
        (
            "user",
            f"The staging DB runs on port 5433, use DB_PASSWORD={SECRETS['password']} and the key "
            f"{SECRETS['aws']}. Let's go with postgres://admin:{SECRETS['url_password']}@db.internal:5433/app.",
        ),
        *bash_turns(f"GITHUB_TOKEN={SECRETS['github']} npm test", "Tests: 4 passed", call_id="a"),
        *bash_turns(
            "npm run dev",
            f"ready on http://localhost:3000 with ANTHROPIC_API_KEY={SECRETS['anthropic']}",
            call_id="b",
        ),
        *bash_turns(
            "pip install httpx", f"token {SECRETS['github']} Successfully installed httpx-0.27.0", call_id="c"
        ),
        # the password again with no context a rule knows: it was found once, so it is a secret here too
        (
            "assistant",
            [{"type": "text", "text": f"Connected to staging as admin with {SECRETS['password']}."}],
        ),
    ]
    transcript = tmp_path / "secret-session.jsonl"
    transcript.write_bytes(claude_transcript("sec-1", turns, cwd=str(tmp_path)))
    home = tmp_path / "client-home"
    payload = {"session_id": "sec-1", "transcript_path": str(transcript), "cwd": str(tmp_path)}
    proc, _ = run_hook("stop", payload, hook_env(home, server.url, server.key))
    assert proc.returncode == 0
    wait_for_worker(home)
    assert server.container.runner.wait_idle(120)
    session = server.container.sessions.get(server.team_id, "sec-1")
    assert session.status == "learned", session.stats
    assert session.stats["consolidate"]["created"] >= 3  # something was learned from those lines

    server_home = tmp_path / "server-home"
    stored = [p for p in server_home.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".jsonl.gz") for p in stored)
    assert any(p.name == "cairn.db" for p in stored)
    import gzip

    for path in stored:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        for kind, secret in SECRETS.items():
            assert secret.encode() not in data, f"{kind} secret found in {path.relative_to(server_home)}"
    # the client's own spool and state never hold a secret either
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in SECRETS.values():
                assert secret.encode() not in data


def _learned_unredacted(container, api, team, session_id: str, project: str, raw: bytes) -> list[dict]:
    """The memories of a transcript uploaded as it was written (no client redaction), learned."""
    import gzip

    from tests.integration.pipeline_helpers import learn, memories_of

    learn(
        container,
        api,
        team.headers,
        raw=gzip.compress(raw),
        session_id=session_id,
        project=project,
        prepared=False,
    )
    return memories_of(api, team.headers, project)


def _not_in_the_database(container, secret: str) -> None:
    db = container.settings.db_path
    for path in (db, db.with_name(db.name + "-wal")):
        if path.exists():
            assert secret.encode() not in path.read_bytes()


def test_a_transcript_uploaded_without_client_redaction_still_learns_no_secret(container, api, team_a):
    raw = claude_transcript("raw-1", [("user", f"Let's use the deploy key {SECRETS['github']} for CI.")])
    learned = _learned_unredacted(container, api, team_a, "raw-1", "p/raw", raw)
    [decision] = [m for m in learned if m["kind"] == "decision"]
    assert SECRETS["github"] not in decision["content"] and "[REDACTED:github_token]" in decision["content"]
    _not_in_the_database(container, SECRETS["github"])


def test_a_secret_found_by_its_context_is_redacted_where_the_transcript_repeats_it_server_side(
    container, api, team_a
):
    password = SECRETS["password"]
    raw = claude_transcript(
        "raw-2",
        [
            *bash_turns("cat .env", f"DB_PASSWORD={password}\nDB_PORT=5433", call_id="e"),
            ("user", f"Let's use {password} for the staging database from now on."),
        ],
    )
    shown = [m["content"] for m in _learned_unredacted(container, api, team_a, "raw-2", "p/raw2", raw)]
    assert shown and not any(password in text for text in shown)
    assert any("[REDACTED:secret_assignment]" in text for text in shown)
    _not_in_the_database(container, password)

"""A session granted an upload that never came does not stay `received` forever: it fails, saying why."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace

import pytest
from cairn.bootstrap import build_container
from cairn.settings import Settings

from tests.integration.pipeline_helpers import claude_transcript, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PROJECT = "github.com/acme/shop"
REASON = "no transcript part was uploaded before the upload URL expired"


def grant(api, headers, session_id: str) -> None:
    body = {"agent": "claude-code", "session_id": session_id, "project": PROJECT, "part": 1, "bytes": 10}
    assert api.post("/v1/uploads", headers=headers, json=body).status_code == 201


def age(container, team_id: str, session_id: str, by: timedelta) -> None:
    session = container.sessions.get(team_id, session_id)
    container.sessions.put(replace(session, updated_at=session.updated_at - by))


def test_a_session_whose_upload_never_came_is_failed_with_a_reason_at_start_up(
    tmp_path, container, api, team_a
):
    grant(api, team_a.headers, "never-sent")
    grant(api, team_a.headers, "just-granted")
    upload(
        api,
        team_a.headers,
        raw=claude_transcript("sent", [("user", "hi")]),
        session_id="sent",
        project=PROJECT,
    )
    assert container.runner.wait_idle(60)
    ttl = container.settings.upload_url_ttl_s
    for session_id in ("never-sent", "sent"):
        age(container, team_a.team_id, session_id, timedelta(seconds=ttl) + timedelta(hours=1))
    sent_before = container.sessions.get(team_a.team_id, "sent")
    container.close()

    restarted = build_container(Settings(mode="local", home=container.settings.home))
    try:
        never = restarted.sessions.get(team_a.team_id, "never-sent")
        assert never.status == "failed"
        assert never.stats["error"]["message"] == REASON and never.stats["error"]["code"] == "upload_expired"
        assert restarted.sessions.get(team_a.team_id, "just-granted").status == "received"  # URL still valid
        assert restarted.sessions.get(team_a.team_id, "sent") == sent_before  # a part came: untouched
    finally:
        restarted.close()


def test_the_sweep_counts_what_it_failed_and_a_second_run_changes_nothing(container, api, team_a):
    grant(api, team_a.headers, "never-sent")
    age(container, team_a.team_id, "never-sent", timedelta(days=1))
    assert container.uploads.expire_unsent([team_a.team_id]) == 1
    failed = container.sessions.get(team_a.team_id, "never-sent")
    assert container.uploads.expire_unsent([team_a.team_id]) == 0
    assert container.sessions.get(team_a.team_id, "never-sent") == failed


def test_a_part_a_crash_stored_but_never_recorded_is_recorded_and_learned_after_restart(
    container, api, team_a
):
    from cairn.capture.upload import prepare
    from cairn.services.uploads import transcript_key

    grant(api, team_a.headers, "cut-after-store")
    raw = claude_transcript("cut-after-store", [("user", "We decided to use Redis for the job queue.")])
    key = transcript_key(team_a.team_id, PROJECT, "cut-after-store", 1)
    container.blobs.put(key, prepare(raw).data, "application/gzip")  # the PUT's write, then kill -9
    age(container, team_a.team_id, "cut-after-store", timedelta(days=1))
    container.close()

    restarted = build_container(Settings(mode="local", home=container.settings.home))
    try:
        session = restarted.sessions.get(team_a.team_id, "cut-after-store")
        assert (session.status, session.transcript_keys) == ("received", (key,))  # not failed as unsent
        assert restarted.runner.resume_unfinished(restarted.teams) == 1  # what `cairn serve` does next
        assert restarted.runner.wait_idle(120)
        assert restarted.sessions.get(team_a.team_id, "cut-after-store").status == "learned"
    finally:
        restarted.close()


class _Ticks:
    """The sweep's schedule, ticked by hand: `n` periods pass, then the server stops."""

    def __init__(self, n: int) -> None:
        self.left = n

    def wait(self, timeout: float) -> bool:
        assert timeout == 900  # every 15 minutes
        self.left -= 1
        return self.left < 0


def test_a_running_local_server_sweeps_again_every_15_minutes(container, api, team_a):
    from cairn.cli.serve_cmds import _sweep_every
    from cairn.services.uploads import SWEEP_EVERY

    grant(api, team_a.headers, "granted-while-running")
    age(container, team_a.team_id, "granted-while-running", timedelta(hours=1))
    swept: list[int] = []
    _sweep_every(lambda: swept.append(container.sweep()) or swept[-1], _Ticks(2), SWEEP_EVERY.total_seconds())
    assert swept == [1, 0]
    assert container.sessions.get(team_a.team_id, "granted-while-running").stats["error"]["message"] == REASON


def test_a_failed_sweep_is_tried_again_at_the_next_tick():
    from cairn.cli.serve_cmds import _sweep_every

    calls = []

    def sweep() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk busy")
        return 0

    _sweep_every(sweep, _Ticks(2), 900)
    assert len(calls) == 2


# --- in AWS: the scheduled sweep Lambda (functions/sweeper) over DynamoDB and S3 (moto) ------------------
@pytest.fixture
def aws(monkeypatch):
    import boto3
    from cairn.adapters.aws.dynamo_table import create_table
    from moto import mock_aws

    for name, value in {
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "CAIRN_MODE": "aws",
        "CAIRN_TABLE_NAME": "cairn-sweep",
        "CAIRN_BUCKET": "cairn-sweep-transcripts",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        create_table("cairn-sweep", boto3.client("dynamodb"), stream=False)
        s3 = boto3.client("s3")
        s3.create_bucket(
            Bucket="cairn-sweep-transcripts", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
        )
        yield s3


def _sweep_handler():
    """functions/sweeper/handler.py as Lambda loads it (a fresh import: its sweep binds the table then)."""
    import importlib.util

    from tests.paths import REPO

    spec = importlib.util.spec_from_file_location(
        "sweeper_handler", REPO / "functions" / "sweeper" / "handler.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


class _Context:
    function_name, memory_limit_in_mb, aws_request_id = "cairn-dev-sweep", 512, "req-1"
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:cairn-dev-sweep"


def test_in_aws_the_scheduled_sweep_fails_unsent_uploads_and_leaves_stored_parts_to_the_pipeline(aws):
    from cairn.adapters.aws.dynamo import dynamo_repositories
    from cairn.adapters.aws.s3 import S3BlobStore
    from cairn.services.keys import KeyService
    from cairn.services.uploads import UploadRequest, UploadService

    repos = dynamo_repositories("cairn-sweep", region="eu-west-1")
    table = SimpleNamespace(sessions=repos.sessions)  # what `age` needs of a container
    team, _, secret = KeyService(repos.teams).create_team("sweep", "dev")
    caller = KeyService(repos.teams).authenticate(secret)
    uploads = UploadService(S3BlobStore("cairn-sweep-transcripts"), repos.sessions, 1_048_576, 300)
    for session_id in ("never-sent", "stored-not-yet-parsed", "sent", "just-granted", "long-ago"):
        uploads.request_upload(caller, UploadRequest("claude-code", session_id, PROJECT, 1, 10))
    for session_id in ("stored-not-yet-parsed", "sent"):  # S3 took the part; the pipeline records it later
        key = f"{uploads_prefix(team.id, session_id)}transcript-1.jsonl.gz"
        aws.put_object(Bucket="cairn-sweep-transcripts", Key=key, Body=b"x")
    uploads.part_stored(f"{uploads_prefix(team.id, 'sent')}transcript-1.jsonl.gz")  # parse ran
    for session_id in ("never-sent", "stored-not-yet-parsed", "sent"):
        age(table, team.id, session_id, timedelta(hours=1))
    age(table, team.id, "long-ago", timedelta(days=3))  # past the sweep's horizon: not read
    before = {s: repos.sessions.get(team.id, s) for s in ("stored-not-yet-parsed", "sent", "long-ago")}

    handler = _sweep_handler()
    assert handler({"source": "aws.events"}, _Context()) == {"expired": 1}
    never = repos.sessions.get(team.id, "never-sent")
    assert never.status == "failed"
    assert never.stats["error"]["code"] == "upload_expired" and never.stats["error"]["message"] == REASON
    assert repos.sessions.get(team.id, "just-granted").status == "received"  # its URL is still valid
    for session_id, session in before.items():
        assert repos.sessions.get(team.id, session_id) == session
    assert handler({"source": "aws.events"}, _Context()) == {"expired": 0}  # nothing left to fail


def uploads_prefix(team_id: str, session_id: str) -> str:
    from cairn.services.uploads import session_prefix

    return session_prefix(team_id, PROJECT, session_id)

"""Learning parity: the same real transcripts learned through the deployed Step Functions stages (the
LocalStack stack) and through local mode; the memories each produced are diffed (kind, content and whether
current; ids and times aside), each difference printed, and one JSON line ends the run.

The sessions: the three coding-dev transcripts (each its own team, as coding_eval.py learns them); one
multi-part session with sub-agents and two Stops (the claude-code-viewer session cut in two halves, its two
sub-agent files as parts between them), each part learned before the next is sent on both sides (as
Stops some minutes apart are: parts that arrive together fold into one run on the stack and are learned
at once, a timing no local run reproduces); three sessions of the multi-session dev set, learned in order into
one team (read as multi_session_eval.py reads them). Locally each group is learned by the inline runner in
a fresh store; on the stack each part is uploaded through the API's presigned POST, as the stop hook does,
and the group waits until the session is learned before the next.

Needs the stack up and deployed (`python3 localstack/stack.py up`, `localstack/deploy.py`).

    .venv/bin/python benchmarks/aws_parity.py [--only coding|multipart|multisession] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from cairn.bootstrap import build_container, shared_embedder  # noqa: E402
from cairn.capture.upload import prepare, upload_part  # noqa: E402
from cairn.domain.models import KeyScope, Principal  # noqa: E402
from cairn.settings import Settings  # noqa: E402

from benchmarks.coding_eval import DEV_SETS, _agent_of, _parts  # noqa: E402
from benchmarks.multi_session_eval import AGENTS, _read  # noqa: E402
from benchmarks.multi_session_eval import DATA as MULTI  # noqa: E402

STATE = Path(os.environ.get("CAIRN_LOCALSTACK_HOME", ROOT / ".localstack"))
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts" / "claude-code" / "claude-code-viewer"
ENDPOINT = os.environ.get("CAIRN_LOCALSTACK_ENDPOINT", "http://127.0.0.1:4566")
DEADLINE_S = 600


def groups(only: str | None) -> list[tuple[str, str, list[tuple[str, str, list[bytes]]]]]:
    """(name, project, [(session id, agent, parts)]) learned into one team each, in order."""
    out = []
    if only in (None, "coding"):
        for name, transcript, _ in DEV_SETS:
            parts = [p.read_bytes() for p in _parts(transcript)]
            out.append((name, f"bench/{name}", [(f"parity-{name}", _agent_of(transcript), parts)]))
    if only in (None, "multipart"):
        lines = (
            (FIXTURES / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").read_bytes().splitlines(keepends=True)
        )
        half = len(lines) // 2
        subs = [(FIXTURES / f"agent-test-hash-{n}.jsonl").read_bytes() for n in (123, 456)]
        parts = [b"".join(lines[:half]), *subs, b"".join(lines[half:])]  # Stop, sub-agents, Stop
        out.append(("multipart", "bench/multipart", [("parity-multipart", "claude-code", parts)]))
    if only in (None, "multisession"):
        spec = json.loads((MULTI / "set.json").read_text())
        sessions = [
            (s["id"], AGENTS.get(s["agent"], s["agent"]), [_read(MULTI / s["file"])])
            for s in spec["sessions"][:3]
        ]
        out.append(("multisession", spec["project"], sessions))
    return out


def ingest_session(container, caller, agent: str, session_id: str, project: str, parts, first: int = 1):
    """coding_eval's ingest, from part `first` on (the earlier ones are stored already)."""
    from cairn.services.uploads import UploadRequest

    for number, raw in enumerate(parts, start=1):
        if number < first:
            continue
        data = prepare(raw).data
        target = container.uploads.request_upload(
            caller, UploadRequest(agent, session_id, project, number, len(data))
        )
        container.blobs.put(target.key, data, "application/gzip")
        container.uploads.part_stored(target.key)
    session = container.runner.run(caller.team_id, session_id)
    if session is None or session.status != "learned":
        raise SystemExit(f"ingest of {session_id} failed: {session and session.stats.get('error')}")


def _key(m: dict) -> tuple[str, str, bool]:
    return (m["kind"], m["content"], m.get("valid_to") is None and not m.get("superseded_by"))


def learn_locally(project: str, sessions) -> Counter:
    with tempfile.TemporaryDirectory() as home:
        container = build_container(Settings(mode="local", home=Path(home)), embedder=shared_embedder())
        try:
            team, _, _ = container.keys.create_team("parity", "dev")
            caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
            for session_id, agent, parts in sessions:
                for number in range(1, len(parts) + 1):  # learned after each part, as on the stack
                    ingest_session(
                        container, caller, agent, session_id, project, parts[:number], first=number
                    )
            from cairn.domain import codec

            return Counter(
                _key(codec.encode_memory(m)) for m in container.pipeline.memory_repo.iter_team(team.id)
            )
        finally:
            if container.runner is not None:
                container.runner.close()
            container.close()


def _stack_team(outputs: dict) -> str:
    """A fresh team on the deployed table (the operator's `cairn admin create-team`); its admin key."""
    env = {
        "CAIRN_MODE": "aws",
        "CAIRN_ENV": "local",
        "CAIRN_TABLE_NAME": outputs["TableName"],
        "CAIRN_BUCKET": outputs["BucketName"],
        "CAIRN_OPENSEARCH_ENDPOINT": outputs["OpenSearchEndpoint"],
        "CAIRN_OPENSEARCH_AUTH": "none",
        "AWS_ENDPOINT_URL": ENDPOINT,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        container = build_container(Settings(), embedder=shared_embedder())
        _, _, secret = container.keys.create_team(f"parity-{time.time_ns()}", "dev")
        return secret
    finally:
        os.environ.clear()
        os.environ.update(saved)


def learn_on_stack(api_url: str, key: str, project: str, sessions) -> Counter:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=api_url, headers=headers, timeout=60) as api:
        for session_id, agent, parts in sessions:
            for number, raw in enumerate(parts, start=1):
                upload_part(
                    api_url, key, agent=agent, session_id=session_id, project=project, part=number,
                    data=prepare(raw).data,
                )  # fmt: skip
                _wait_learned(api, session_id, number)
        found, cursor = [], None
        while True:
            params = {"project": project, "limit": 200, "include_superseded": True}
            if cursor:
                params["cursor"] = cursor
            page = api.get("/v1/memories", params=params).json()
            found += page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return Counter(_key(m) for m in found)


def _wait_learned(api: httpx.Client, session_id: str, parts: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        resp = api.get(f"/v1/sessions/{session_id}")
        if resp.status_code == 200:
            s = resp.json()
            if s["status"] == "failed":
                raise SystemExit(f"{session_id} failed on the stack: {s['stats'].get('error')}")
            if s["status"] == "learned" and len(s["transcript_keys"]) == parts:
                time.sleep(5)  # a pass for parts recorded meanwhile would set it back to received
                if api.get(f"/v1/sessions/{session_id}").json()["status"] == "learned":
                    return
        time.sleep(2)
    raise SystemExit(f"{session_id} was not learned on the stack within {DEADLINE_S} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("coding", "multipart", "multisession"))
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    deploy = json.loads((STATE / "run" / "deploy.json").read_text())
    sessions = differences = 0
    memories = {"local": 0, "stack": 0}
    seconds = {"local": 0.0, "stack": 0.0}
    for name, project, group in groups(args.only):
        t0 = time.perf_counter()
        local = learn_locally(project, group)
        t1 = time.perf_counter()
        stack = learn_on_stack(deploy["api_url"], _stack_team(deploy["outputs"]), project, group)
        t2 = time.perf_counter()
        seconds["local"] += t1 - t0
        seconds["stack"] += t2 - t1
        sessions += len(group)
        memories["local"] += sum(local.values())
        memories["stack"] += sum(stack.values())
        only_local, only_stack = local - stack, stack - local
        differences += sum(only_local.values()) + sum(only_stack.values())
        print(
            f"{name}: {sum(local.values())} memories locally, {sum(stack.values())} on the stack", flush=True
        )
        for (kind, content, current), n in sorted(only_local.items()):
            print(f"  only local  x{n} [{kind}{'' if current else ', superseded'}] {content[:160]!r}")
        for (kind, content, current), n in sorted(only_stack.items()):
            print(f"  only stack  x{n} [{kind}{'' if current else ', superseded'}] {content[:160]!r}")
    print(
        json.dumps(
            {
                "sessions": sessions,
                "differences": differences,
                "memories": memories,
                "seconds": {k: round(v, 1) for k, v in seconds.items()},
            }
        )
    )


if __name__ == "__main__":
    main()

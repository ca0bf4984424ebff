"""Shared by the pipeline and capture tests: upload a transcript through the real API, wait for learning."""

from __future__ import annotations

from urllib.parse import urlsplit

from cairn.capture.upload import prepare

from tests.paths import CLAUDE_SESSION, CODEX_LOCALPUSH

CLAUDE_FIXTURE = CLAUDE_SESSION
CODEX_DIR = CODEX_LOCALPUSH


def upload(
    api,
    headers,
    *,
    raw: bytes,
    session_id: str,
    project: str,
    agent: str = "claude-code",
    part: int = 1,
    prepared: bool = True,
    started_at: str | None = None,
) -> dict:
    """POST /v1/uploads, then PUT the (redacted, gzipped) bytes to the presigned path, as a hook would
    (`started_at`: when the session ran, as `cairn backfill` says it)."""
    data = prepare(raw).data if prepared else raw
    grant = api.post(
        "/v1/uploads",
        headers=headers,
        json={
            "agent": agent,
            "session_id": session_id,
            "project": project,
            "part": part,
            "bytes": len(data),
            "content_type": "application/gzip",
            **({"started_at": started_at} if started_at else {}),
        },
    )
    assert grant.status_code == 201, grant.text
    target = grant.json()
    put = api.put(urlsplit(target["url"]).path, content=data, headers=target["headers"])
    assert put.status_code == 200, put.text
    return target


def learn(container, api, headers, **kwargs) -> dict:
    """Upload and wait until the inline runner has learned from the session; returns the session JSON."""
    upload(api, headers, **kwargs)
    assert container.runner.wait_idle(120)
    resp = api.get(f"/v1/sessions/{kwargs['session_id']}", headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()


def memories_of(api, headers, project: str, **params) -> list[dict]:
    resp = api.get("/v1/memories", headers=headers, params={"project": project, "limit": 500, **params})
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]


def claude_transcript(
    session_id: str, turns: list[tuple[str, object]], cwd: str = "/home/dev/demo", day: str = "2026-01-01"
) -> bytes:
    """A Claude Code JSONL transcript: (role, content) turns threaded by parentUuid, as Claude Code writes,
    a second apart from midnight of `day`."""
    import json
    import uuid

    lines = []
    parent = None
    for i, (role, content) in enumerate(turns):
        me = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/{i}"))
        message: dict = {"role": role, "content": content}
        if role == "assistant":
            message.update({"id": f"msg_{session_id}_{i}", "type": "message", "model": "claude-test"})
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "uuid": me,
                    "parentUuid": parent,
                    "sessionId": session_id,
                    "cwd": cwd,
                    "isSidechain": False,
                    "userType": "external",
                    "version": "2.0.0",
                    "timestamp": f"{day}T00:{i // 60:02d}:{i % 60:02d}.000Z",
                    "message": message,
                }
            )
        )
        parent = me
    return ("\n".join(lines) + "\n").encode()


def bash_turns(command: str, output: str, *, error: bool = False, call_id: str = "toolu_1") -> list:
    """An assistant Bash call and its result, as two turns."""
    return [
        ("assistant", [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}]),
        ("user", [{"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": error}]),
    ]


def codex_rollout(session_id: str, cwd: str, steps: list[tuple[str, object]]) -> bytes:
    """A Codex rollout: session_meta, then ("user", text) / ("shell", (cmd, output, exit_code)) steps."""
    import json

    ts = "2026-02-23T12:00:00.000Z"
    lines = [
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {
                "id": session_id,
                "timestamp": ts,
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.104.0",
                "git": {"branch": "main", "repository_url": "git@github.com:acme/shop.git"},
            },
        }
    ]
    for i, (kind, value) in enumerate(steps):
        if kind == "user":
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": value}],
                    },
                }
            )
            lines.append(
                {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": value}}
            )
        else:
            cmd, output, code = value  # type: ignore[misc]
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": cmd}),
                        "call_id": f"call_{i}",
                    },
                }
            )
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": f"call_{i}",
                        "output": json.dumps({"output": output, "metadata": {"exit_code": code}}),
                    },
                }
            )
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()

"""Poisoned sessions in every agent format Cairn parses, built in the shapes of the real fixtures
(tests/fixtures/transcripts/*) and the parsers (cairn/transcripts/*.py).

Each session: the user types a request, the agent calls one tool, the tool returns text that carries
an injected directive, the agent replies. `turn(...)` describes it once; `build(agent, ...)` writes
it in that agent's own file format.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

CWD = "/home/dev/shop"


@dataclass(frozen=True)
class Turn:
    prompt: str  # what the user typed
    tool: str  # the tool as this agent names it
    args: dict[str, Any]
    output: str  # what the tool returned
    reply: str = "Done: I read it and ran nothing from it."


def build(agent: str, session_id: str, t: Turn) -> bytes:
    lines = _BUILDERS[agent](session_id, t)
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


def _ts(i: int) -> str:
    return f"2026-03-01T10:00:{i:02d}.000Z"


def _claude_code(sid: str, t: Turn) -> list[dict]:
    turns: list[tuple[str, Any]] = [
        ("user", t.prompt),
        ("assistant", [{"type": "tool_use", "id": "toolu_01", "name": t.tool, "input": t.args}]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_01", "content": t.output}]),
        ("assistant", [{"type": "text", "text": t.reply}]),
    ]
    out, parent = [], None
    for i, (role, content) in enumerate(turns):
        me = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{sid}/{i}"))
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message.update({"id": f"msg_{sid}_{i}", "type": "message", "model": "claude-test"})
        out.append(
            {
                "type": role,
                "uuid": me,
                "parentUuid": parent,
                "sessionId": sid,
                "cwd": CWD,
                "isSidechain": False,
                "userType": "external",
                "version": "2.0.0",
                "timestamp": _ts(i),
                "message": message,
            }
        )
        parent = me
    return out


def _codex(sid: str, t: Turn) -> list[dict]:
    def item(i: int, payload: dict) -> dict:
        return {"timestamp": _ts(i), "type": "response_item", "payload": payload}

    return [
        {
            "timestamp": _ts(0),
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": _ts(0),
                "cwd": CWD,
                "originator": "codex_cli_rs",
                "cli_version": "0.104.0",
            },
        },
        item(1, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t.prompt}]}),
        item(
            2, {"type": "function_call", "name": t.tool, "arguments": json.dumps(t.args), "call_id": "call_1"}
        ),
        item(3, {"type": "function_call_output", "call_id": "call_1", "output": t.output}),
        item(
            4, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t.reply}]}
        ),
    ]


def _gemini_cli(sid: str, t: Turn) -> list[dict]:
    call = {
        "id": f"{t.tool}_1",
        "name": t.tool,
        "args": t.args,
        "result": [
            {"functionResponse": {"id": f"{t.tool}_1", "name": t.tool, "response": {"output": t.output}}}
        ],
        "status": "success",
        "timestamp": _ts(2),
        "resultDisplay": t.output,
    }
    return [
        {
            "sessionId": sid,
            "projectHash": "ab" * 32,
            "startTime": _ts(0),
            "lastUpdated": _ts(0),
            "kind": "main",
        },
        {"id": "u1", "timestamp": _ts(1), "type": "user", "content": [{"text": t.prompt}]},
        {
            "id": "g1",
            "timestamp": _ts(2),
            "type": "gemini",
            "content": "",
            "toolCalls": [call],
            "model": "gemini-test",
        },
        {"id": "g2", "timestamp": _ts(3), "type": "gemini", "content": t.reply, "model": "gemini-test"},
    ]


def _copilot_cli(sid: str, t: Turn) -> list[dict]:
    def event(i: int, kind: str, data: dict) -> dict:
        return {"type": kind, "data": data, "id": f"ev-{i}", "timestamp": _ts(i), "parentId": f"ev-{i - 1}"}

    return [
        event(
            0,
            "session.start",
            {
                "sessionId": sid,
                "copilotVersion": "1.0.102",
                "startTime": _ts(0),
                "selectedModel": "claude-sonnet-4.6",
                "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main"},
            },
        ),
        event(1, "user.message", {"content": t.prompt, "transformedContent": t.prompt, "messageId": "m1"}),
        event(
            2,
            "assistant.message",
            {
                "messageId": "m2",
                "content": "",
                "toolRequests": [
                    {"toolCallId": "call_1", "name": t.tool, "arguments": t.args, "type": "function"}
                ],
            },
        ),
        event(
            3,
            "tool.execution_complete",
            {"toolCallId": "call_1", "success": True, "result": {"content": t.output}},
        ),
        event(4, "assistant.message", {"messageId": "m3", "content": t.reply, "toolRequests": []}),
    ]


def _opencode(sid: str, t: Turn) -> list[dict]:
    def info(mid: str, role: str, created: int) -> dict:
        out: dict[str, Any] = {"id": mid, "sessionID": sid, "role": role, "time": {"created": created}}
        if role == "assistant":
            out.update({"path": {"cwd": CWD, "root": CWD}, "modelID": "fake", "providerID": "fake"})
            out["time"]["completed"] = created + 10
        return out

    part = {
        "id": "prt_2",
        "sessionID": sid,
        "messageID": "msg_2",
        "type": "tool",
        "callID": "call_1",
        "tool": t.tool,
        "state": {"status": "completed", "input": t.args, "output": t.output, "title": t.tool},
    }
    return [
        {"type": "session", "id": sid, "directory": CWD},
        {
            "info": info("msg_1", "user", 1795433456000),
            "parts": [{"id": "prt_1", "type": "text", "text": t.prompt}],
        },
        {"info": info("msg_2", "assistant", 1795433457000), "parts": [part]},
        {
            "info": info("msg_3", "assistant", 1795433458000),
            "parts": [{"id": "prt_3", "type": "text", "text": t.reply}],
        },
    ]


def _cursor(sid: str, t: Turn) -> list[dict]:
    """Cursor's file has no tool results: a page or file the agent saw reaches it only as context the
    editor attached around the typed query, or a result block a later build might write."""
    attached = f"<attached_context source={json.dumps(t.args)}>\n{t.output}\n</attached_context>"
    return [
        {
            "role": "user",
            "message": {
                "content": [{"type": "text", "text": f"{attached}\n<user_query>{t.prompt}</user_query>"}]
            },
        },
        {
            "role": "assistant",
            "message": {"content": [{"type": "tool_use", "name": t.tool, "input": t.args}]},
        },
        {"role": "user", "message": {"content": [{"type": "tool_result", "content": t.output}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": t.reply}]}},
        {"type": "turn_ended", "status": "success"},
    ]


_BUILDERS = {
    "claude-code": _claude_code,
    "codex": _codex,
    "gemini-cli": _gemini_cli,
    "copilot-cli": _copilot_cli,
    "opencode": _opencode,
    "cursor": _cursor,
}
AGENTS = tuple(_BUILDERS)

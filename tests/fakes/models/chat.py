"""OpenAI-compatible chat completions (`POST /v1/chat/completions`), streamed as SSE (OpenCode)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.models.server import Reply, Turn, sse

NAME = "chat"


def read_turn(path: str, body: dict[str, Any]) -> Turn:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    tools = tuple(
        (t.get("function") or {}).get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)
    )
    after = isinstance(last, dict) and last.get("role") == "tool"
    return Turn(
        tools=tools,
        after_tool_result=after,
        stream=bool(body.get("stream")),
        tool_output=json.dumps(last.get("content"), ensure_ascii=False) if after else None,
    )


def _message(reply: Reply) -> dict[str, Any]:
    if reply.tool:
        call = {
            "id": reply.call_id,
            "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": reply.text}


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.tool else "stop"


USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def plain(reply: Reply, turn: Turn) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": _message(reply), "finish_reason": _finish(reply)}],
        "usage": USAGE,
    }


def stream(reply: Reply, turn: Turn) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}
        return sse(None, {**data, "choices": [choice], **extra})

    message = _message(reply)
    if reply.tool:
        call = {**message["tool_calls"][0], "index": 0}
        yield chunk({"role": "assistant", "content": None, "tool_calls": [call]}, None)
    else:
        yield chunk({"role": "assistant", "content": reply.text}, None)
    yield chunk({}, _finish(reply), usage=USAGE)
    yield "data: [DONE]\n\n"

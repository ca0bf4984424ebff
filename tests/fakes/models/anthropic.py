"""Anthropic Messages (`POST /v1/messages`), streamed as SSE when `stream` is true (Claude Code)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.models.server import Reply, Turn, sse

NAME = "anthropic"


def read_turn(path: str, body: dict[str, Any]) -> Turn:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    after = isinstance(content, list) and any(
        isinstance(c, dict) and c.get("type") == "tool_result" for c in content
    )
    tools = tuple(t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict))
    output = None
    if after:
        result = next(c for c in content if isinstance(c, dict) and c.get("type") == "tool_result")
        output = json.dumps(result.get("content"), ensure_ascii=False)
    return Turn(tools=tools, after_tool_result=after, stream=bool(body.get("stream")), tool_output=output)


def _block(reply: Reply) -> dict[str, Any]:
    if reply.tool:
        return {
            "type": "tool_use",
            "id": f"toolu_{reply.call_id}",
            "name": reply.tool,
            "input": reply.arguments,
        }
    return {"type": "text", "text": reply.text}


def _stop(reply: Reply) -> str:
    return "tool_use" if reply.tool else "end_turn"


def plain(reply: Reply, turn: Turn) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": [_block(reply)],
        "stop_reason": _stop(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


def stream(reply: Reply, turn: Turn) -> Iterator[str]:
    message = {**plain(reply, turn), "content": [], "stop_reason": None}
    yield sse("message_start", {"type": "message_start", "message": message})
    block = _block(reply)
    if reply.tool:
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.arguments)}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
    yield sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start})
    yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop(reply), "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})

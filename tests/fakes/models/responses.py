"""OpenAI Responses (`POST /v1/responses`), streamed as SSE (Codex CLI)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.models.server import Reply, Turn, sse

NAME = "responses"


def read_turn(path: str, body: dict[str, Any]) -> Turn:
    items = body.get("input") or []
    last = items[-1] if isinstance(items, list) and items else {}
    after = isinstance(last, dict) and last.get("type") in ("function_call_output", "custom_tool_call_output")
    tools = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":  # Codex groups an MCP server's tools: "mcp__cairn" / "recall"
            tools += [f"{t.get('name')}/{inner.get('name')}" for inner in t.get("tools") or []]
        else:
            tools.append(t.get("name") or (t.get("function") or {}).get("name") or "")
    output = json.dumps(last.get("output"), ensure_ascii=False) if after else None
    return Turn(
        tools=tuple(tools),
        after_tool_result=after,
        stream=body.get("stream", True) is not False,
        tool_output=output,
    )


def _item(reply: Reply) -> dict[str, Any]:
    if reply.tool:
        namespace, _, name = reply.tool.rpartition("/")
        item = {
            "type": "function_call",
            "id": f"fc_{reply.call_id}",
            "call_id": reply.call_id,
            "name": name,
            "arguments": json.dumps(reply.arguments),
            "status": "completed",
        }
        return {**item, "namespace": namespace} if namespace else item
    return {
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
    }


def _response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_fake",
        "object": "response",
        "status": status,
        "model": "gpt-fake",
        "output": output,
        "usage": {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        },
    }


def plain(reply: Reply, turn: Turn) -> dict[str, Any]:
    return _response("completed", [_item(reply)])


def stream(reply: Reply, turn: Turn) -> Iterator[str]:
    item = _item(reply)
    yield sse("response.created", {"type": "response.created", "response": _response("in_progress", [])})
    yield sse(
        "response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}
    )
    if not reply.tool:
        yield sse(
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": reply.text,
            },
        )
    yield sse(
        "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    )
    yield sse(
        "response.completed", {"type": "response.completed", "response": _response("completed", [item])}
    )

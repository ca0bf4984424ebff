"""Gemini `models/<m>:generateContent` and `:streamGenerateContent?alt=sse` (Gemini CLI)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.models.server import Reply, Turn, sse

NAME = "gemini"
# Gemini CLI's own helper calls (next-speaker check, model router) ask for JSON; one object answers all
HELPER_JSON = {"reasoning": "fake", "next_speaker": "user", "model_choice": "flash"}


def read_turn(path: str, body: dict[str, Any]) -> Turn:
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    parts = last.get("parts") if isinstance(last, dict) else None
    after = isinstance(parts, list) and any(isinstance(p, dict) and "functionResponse" in p for p in parts)
    tools = []
    for t in body.get("tools") or []:
        for decl in (t or {}).get("functionDeclarations") or []:
            tools.append(decl.get("name", ""))
    config = body.get("generationConfig") or body.get("config") or {}
    wants_json = config.get("responseMimeType") == "application/json"
    output = None
    if after:
        response = next(
            p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p
        )
        output = json.dumps(response, ensure_ascii=False)
    return Turn(
        tools=tuple(tools),
        after_tool_result=after,
        stream=":streamGenerateContent" in path,
        wants_json=wants_json,
        tool_output=output,
    )


def plain(reply: Reply, turn: Turn) -> dict[str, Any]:
    if reply.tool:
        part: dict[str, Any] = {"functionCall": {"name": reply.tool, "args": reply.arguments}}
    else:
        part = {"text": json.dumps(HELPER_JSON) if turn.wants_json else reply.text}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
        "modelVersion": "gemini-fake",
    }


def stream(reply: Reply, turn: Turn) -> Iterator[str]:
    yield sse(None, plain(reply, turn)).replace("\n\n", "\r\n\r\n")

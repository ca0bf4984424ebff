"""Poisoned sessions in every agent format Cairn parses, built in the shapes of the real fixtures
(tests/fixtures/transcripts/*) and the parsers (cairn/transcripts/*.py).

A session is a list of steps: what the person typed (`Said("user", …)`), what the agent wrote
(`Said("agent", …)`), a tool call with what it returned (`Call`: a page, a file, a command's output, a
sub-agent's report, another MCP server's answer), a compaction summary (`Compaction`) and what the
harness put in a user-role message (`Injected`: Codex records a command the person ran that way).
`build(agent, session_id, steps)` writes them in that agent's own file format. `Turn` is the one-call
session of the first probes: the person asks, the agent calls one tool, the tool returns text carrying
an injected directive, the agent replies.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CWD = "/home/dev/shop"


@dataclass(frozen=True)
class Said:
    who: str  # "user" (a person typed it) or "agent" (the agent wrote it)
    text: str


@dataclass(frozen=True)
class Call:
    tool: str  # the tool as this agent names it
    args: dict[str, Any]
    output: str  # what the tool returned


@dataclass(frozen=True)
class Compaction:
    text: str  # the summary the agent wrote of the conversation so far


@dataclass(frozen=True)
class Injected:
    text: str  # what the agent's harness put in a user-role message (a command the person ran, a notice)


Step = Said | Call | Compaction | Injected


@dataclass(frozen=True)
class Turn:
    prompt: str  # what the user typed
    tool: str  # the tool as this agent names it
    args: dict[str, Any]
    output: str  # what the tool returned
    reply: str = "Done: I read it and ran nothing from it."

    def steps(self) -> list[Step]:
        return [Said("user", self.prompt), Call(self.tool, self.args, self.output), Said("agent", self.reply)]


def build(agent: str, session_id: str, session: Turn | Sequence[Step]) -> bytes:
    steps = session.steps() if isinstance(session, Turn) else list(session)
    if agent not in ("claude-code", "codex"):  # their harnesses write no such messages: a user's, then
        steps = [Said("user", s.text) if isinstance(s, Injected) else s for s in steps]
    lines = _BUILDERS[agent](session_id, steps)
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


def _ts(i: int) -> str:
    return f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}.000Z"


# --- Claude Code ---------------------------------------------------------------------------------
_CLAUDE_CONTINUED = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)


def _claude_code(sid: str, steps: list[Step]) -> list[dict]:
    out: list[dict] = []
    parent: str | None = None

    def record(kind: str, **fields: Any) -> None:
        nonlocal parent
        me = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{sid}/{len(out)}"))
        line = {
            "type": kind,
            "uuid": me,
            "parentUuid": parent,
            "sessionId": sid,
            "cwd": CWD,
            "isSidechain": False,
            "userType": "external",
            "version": "2.0.0",
            "timestamp": _ts(len(out)),
            **fields,
        }
        out.append(line)
        parent = me

    def assistant(content: list[dict]) -> None:
        message = {"id": f"msg_{sid}_{len(out)}", "type": "message", "role": "assistant"}
        record("assistant", message={**message, "model": "claude-test", "content": content})

    for n, s in enumerate(steps):
        if isinstance(s, Said | Injected) and (isinstance(s, Injected) or s.who == "user"):
            record("user", message={"role": "user", "content": s.text})
        elif isinstance(s, Said):
            assistant([{"type": "text", "text": s.text}])
        elif isinstance(s, Call):
            call_id = f"toolu_{n:02d}"
            assistant([{"type": "tool_use", "id": call_id, "name": s.tool, "input": s.args}])
            # a Task's report comes as text blocks, as Claude Code writes a sub-agent's answer
            content: Any = [{"type": "text", "text": s.output}] if s.tool == "Task" else s.output
            result = {"type": "tool_result", "tool_use_id": call_id, "content": content}
            record("user", message={"role": "user", "content": [result]})
        else:
            # a compaction starts a new root that points back at the conversation it summarises
            last = parent
            parent = None
            record("system", subtype="compact_boundary", content="Conversation compacted", level="info")
            out[-1]["logicalParentUuid"] = last
            record(
                "user",
                message={"role": "user", "content": _CLAUDE_CONTINUED + s.text},
                isVisibleInTranscriptOnly=True,
                isCompactSummary=True,
            )
    return out


# --- Codex ---------------------------------------------------------------------------------------
def _codex(sid: str, steps: list[Step]) -> list[dict]:
    out: list[dict] = [
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
        }
    ]

    def item(payload: dict) -> None:
        out.append({"timestamp": _ts(len(out)), "type": "response_item", "payload": payload})

    for n, s in enumerate(steps):
        if isinstance(s, Said):
            role, kind = ("user", "input_text") if s.who == "user" else ("assistant", "output_text")
            item({"type": "message", "role": role, "content": [{"type": kind, "text": s.text}]})
        elif isinstance(s, Injected):
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": s.text}]})
        elif isinstance(s, Call) and s.tool == "web_search":
            # Codex's own search keeps the query, never the results
            action = {"type": "search", "query": s.args.get("query")}
            item({"type": "web_search_call", "status": "completed", "action": action})
        elif isinstance(s, Call):
            call_id = f"call_{n}"
            item(
                {"type": "function_call", "name": s.tool, "arguments": json.dumps(s.args), "call_id": call_id}
            )
            item({"type": "function_call_output", "call_id": call_id, "output": s.output})
        else:
            out.append(
                {
                    "timestamp": _ts(len(out)),
                    "type": "compacted",
                    "payload": {"message": s.text, "replacement_history": []},
                }
            )
    return out


# --- Gemini CLI ----------------------------------------------------------------------------------
def _gemini_cli(sid: str, steps: list[Step]) -> list[dict]:
    out: list[dict] = [
        {
            "sessionId": sid,
            "projectHash": "ab" * 32,
            "startTime": _ts(0),
            "lastUpdated": _ts(0),
            "kind": "main",
        }
    ]
    for n, s in enumerate(steps):
        mid = f"m{n}"
        if isinstance(s, Said) and s.who == "user":
            out.append({"id": mid, "timestamp": _ts(n), "type": "user", "content": [{"text": s.text}]})
        elif isinstance(s, Said):
            out.append(
                {"id": mid, "timestamp": _ts(n), "type": "gemini", "content": s.text, "model": "gemini-test"}
            )
        elif isinstance(s, Call):
            call_id = f"{s.tool}_{n}"
            response = {"functionResponse": {"id": call_id, "name": s.tool, "response": {"output": s.output}}}
            call = {
                "id": call_id,
                "name": s.tool,
                "args": s.args,
                "result": [response],
                "status": "success",
                "timestamp": _ts(n),
                "resultDisplay": s.output,
            }
            out.append(
                {
                    "id": mid,
                    "timestamp": _ts(n),
                    "type": "gemini",
                    "content": "",
                    "toolCalls": [call],
                    "model": "gemini-test",
                }
            )
        else:
            # /compress: the history is replaced by the model's state snapshot, handed back as a user
            # turn, and the model's acknowledgement (chatCompressionService)
            snapshot = {"id": mid, "timestamp": _ts(n), "type": "user", "content": [{"text": s.text}]}
            ack = {
                "id": f"{mid}b",
                "timestamp": _ts(n),
                "type": "gemini",
                "content": "Got it. Thanks for the additional context!",
                "model": "gemini-test",
            }
            out.append({"$set": {"messages": [snapshot, ack]}})
    return out


# --- Copilot CLI ---------------------------------------------------------------------------------
def _copilot_cli(sid: str, steps: list[Step]) -> list[dict]:
    out: list[dict] = []

    def event(kind: str, data: dict) -> None:
        i = len(out)
        out.append(
            {"type": kind, "data": data, "id": f"ev-{i}", "timestamp": _ts(i), "parentId": f"ev-{i - 1}"}
        )

    event(
        "session.start",
        {
            "sessionId": sid,
            "copilotVersion": "1.0.102",
            "startTime": _ts(0),
            "selectedModel": "claude-sonnet-4.6",
            "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main"},
        },
    )
    for n, s in enumerate(steps):
        if isinstance(s, Said) and s.who == "user":
            event("user.message", {"content": s.text, "transformedContent": s.text, "messageId": f"m{n}"})
        elif isinstance(s, Said):
            event("assistant.message", {"messageId": f"m{n}", "content": s.text, "toolRequests": []})
        elif isinstance(s, Call):
            call_id = f"call_{n}"
            request = {"toolCallId": call_id, "name": s.tool, "arguments": s.args, "type": "function"}
            event("assistant.message", {"messageId": f"m{n}", "content": "", "toolRequests": [request]})
            event(
                "tool.execution_complete",
                {"toolCallId": call_id, "success": True, "result": {"content": s.output}},
            )
        else:
            event("session.compaction_complete", {"success": True, "summaryContent": s.text})
    return out


# --- OpenCode ------------------------------------------------------------------------------------
def _opencode(sid: str, steps: list[Step]) -> list[dict]:
    out: list[dict] = [{"type": "session", "id": sid, "directory": CWD}]

    def message(role: str, parts: list[dict], **extra: Any) -> None:
        mid = f"msg_{len(out)}"
        created = 1795433456000 + 1000 * len(out)
        info: dict[str, Any] = {"id": mid, "sessionID": sid, "role": role, "time": {"created": created}}
        if role == "assistant":
            info.update({"path": {"cwd": CWD, "root": CWD}, "modelID": "fake", "providerID": "fake"})
            info["time"]["completed"] = created + 10
        info.update(extra)
        out.append({"info": info, "parts": [{"id": f"prt_{len(out)}_{k}", **p} for k, p in enumerate(parts)]})

    for n, s in enumerate(steps):
        if isinstance(s, Said):
            message("user" if s.who == "user" else "assistant", [{"type": "text", "text": s.text}])
        elif isinstance(s, Call):
            state = {"status": "completed", "input": s.args, "output": s.output, "title": s.tool}
            part = {"sessionID": sid, "type": "tool", "callID": f"call_{n}", "tool": s.tool, "state": state}
            message("assistant", [part])
        else:
            message("assistant", [{"type": "text", "text": s.text}], summary=True)
    return out


# --- Cursor --------------------------------------------------------------------------------------
def _cursor(sid: str, steps: list[Step]) -> list[dict]:
    """Cursor's file has no tool results nor summaries: a page or file the agent saw reaches it only as
    context the editor attached around the typed query, or a result block a later build might write."""
    out: list[dict] = []
    for n, s in enumerate(steps):
        if isinstance(s, Said) and s.who == "user":
            # what the turn's tools returned, attached by the editor around the query
            attached = ""
            for later in steps[n + 1 :]:
                if isinstance(later, Said) and later.who == "user":
                    break
                if isinstance(later, Call):
                    attached += f"<attached_context source={json.dumps(later.args)}>\n{later.output}\n"
                    attached += "</attached_context>\n"
                elif isinstance(later, Compaction):
                    attached += f'<attached_context source="summary">\n{later.text}\n</attached_context>\n'
            text = f"{attached}<user_query>{s.text}</user_query>"
            out.append({"role": "user", "message": {"content": [{"type": "text", "text": text}]}})
        elif isinstance(s, Said):
            out.append({"role": "assistant", "message": {"content": [{"type": "text", "text": s.text}]}})
            out.append({"type": "turn_ended", "status": "success"})
        elif isinstance(s, Call):
            use = {"type": "tool_use", "name": s.tool, "input": s.args}
            out.append({"role": "assistant", "message": {"content": [use]}})
            out.append(
                {"role": "user", "message": {"content": [{"type": "tool_result", "content": s.output}]}}
            )
    return out


_BUILDERS = {
    "claude-code": _claude_code,
    "codex": _codex,
    "gemini-cli": _gemini_cli,
    "copilot-cli": _copilot_cli,
    "opencode": _opencode,
    "cursor": _cursor,
}
AGENTS = tuple(_BUILDERS)

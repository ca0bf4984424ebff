"""Context hooks agents run: `session-start` prints Cairn context, `user-prompt` a few relevant memories.

An agent waits for these before the session (or the turn) goes on, so they are built to be fast and
harmless: only the standard library, `cairn.projects` and (when no CAIRN_HOME is set) `platformdirs` are
imported; the whole run is bounded by a 3 s deadline; and they FAIL OPEN: on any error (a down server,
bad stdin, a timeout, a bad key) they print nothing and exit 0, so the agent simply starts without
context. Output is written once, complete, or not at all.

Run as `python -m cairn.cli.hooks_context session-start --agent claude-code` (what `cairn install-hooks`
writes, because it skips the `cairn` CLI's own start-up) or as `cairn hook session-start`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, BinaryIO, TextIO
from urllib.parse import urlencode, urlsplit

from cairn.userdirs import server_and_key

DEADLINE_S = 3.0
MAX_STDIN_BYTES = 1_048_576
EVENTS = ("session-start", "user-prompt")
AGENTS = ("claude-code", "codex", "gemini-cli", "cursor", "opencode", "copilot-cli", "plain")


class _Timeout(Exception):
    pass


class OverQuota(OSError):
    """The API answered 429: the team is over its request quota or throttled."""

    def __init__(self, retry_after: int | None) -> None:
        from cairn.capture.quota import over_quota_line

        super().__init__(over_quota_line(retry_after))
        self.retry_after = retry_after


# --- payload --------------------------------------------------------------------------------------
def detect_agent(payload: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """Which agent ran the hook, from the shape of its JSON (the installed command also says --agent)."""
    environ = os.environ if environ is None else environ
    event = str(payload.get("hook_event_name") or "")
    transcript = str(payload.get("transcript_path") or "").replace("\\", "/")
    if "cursor_version" in payload or "workspace_roots" in payload or event[:1].islower():
        return "cursor"
    if "sessionId" in payload and "session_id" not in payload:  # Copilot CLI: camelCase, no event name
        return "copilot-cli"
    if event in ("BeforeAgent", "AfterAgent") or "/.gemini/" in transcript or "GEMINI_PROJECT_DIR" in environ:
        return "gemini-cli"
    if "/.codex/" in transcript or "/rollout-" in transcript or "turn_id" in payload:
        return "codex"
    return "claude-code"


def working_dir(payload: Mapping[str, Any]) -> str:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")  # Cursor
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return os.getcwd()


def render(agent: str, event: str, markdown: str) -> str:
    """The agent's own output format for context; "" when the agent cannot take context for the event."""
    if agent in ("plain", "opencode"):  # OpenCode's plugin puts the text into the system prompt itself
        return markdown
    if agent == "cursor":
        return json.dumps({"additional_context": markdown}) if event == "session-start" else ""
    if agent == "copilot-cli":  # sessionStart and userPromptSubmitted both take it
        return json.dumps({"additionalContext": markdown})
    if event == "session-start":
        name = "SessionStart"
    else:
        name = "BeforeAgent" if agent == "gemini-cli" else "UserPromptSubmit"
    return json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": markdown}})


# --- config and HTTP ------------------------------------------------------------------------------
def client_config(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """(url, key) as the CLI resolves them (`cairn.userdirs`), without importing pydantic."""
    return server_and_key(environ)


def get_json(url: str, key: str | None, path: str, params: dict[str, Any], timeout: float) -> Any:
    import http.client

    parts = urlsplit(url)
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout
        )
    elif parts.scheme == "http":
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    else:
        raise ValueError(f"unsupported URL scheme {parts.scheme!r}")
    headers = {"Accept": "application/json", "User-Agent": "cairn-hook"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    query = urlencode({k: v for k, v in params.items() if v is not None})
    try:
        conn.request("GET", f"{parts.path.rstrip('/')}{path}?{query}", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
    finally:
        conn.close()
    if resp.status == 429:
        from cairn.capture.quota import retry_after_seconds

        raise OverQuota(retry_after_seconds(resp.getheader("Retry-After")))
    if resp.status != 200:
        raise OSError(f"HTTP {resp.status}")
    return json.loads(body)


# --- the hook -------------------------------------------------------------------------------------
def _read_stdin(stdin: BinaryIO, deadline: float) -> bytes:
    if stdin.isatty():
        return b""
    import select

    chunks: list[bytes] = []
    size = 0
    fd = stdin.fileno()
    while size <= MAX_STDIN_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Timeout
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            raise _Timeout
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


# context an agent already put in front of the prompt it hands the hook: Cairn's own block (Gemini CLI
# passes the session-start hook's output along with the first prompt, its tags HTML-escaped) and the
# agent's wrappers around hook output
_INJECTED = re.compile(
    r"(?:<|&lt;)cairn-context(?:>|&gt;).*?(?:(?:<|&lt;)/cairn-context(?:>|&gt;)|$)"
    r"|<hook_context>.*?(?:</hook_context>|$)",
    re.S | re.I,
)


def typed_prompt(prompt: str) -> str:
    """What the person typed: the prompt without context hooks had already added to it."""
    return _INJECTED.sub(" ", prompt).strip()


def _context_for(
    event: str, agent: str, payload: Mapping[str, Any], budget: int | None, deadline: float
) -> str:
    if agent == "cursor" and event != "session-start":
        return ""  # Cursor's beforeSubmitPrompt cannot add context
    from cairn.projects import project_key

    project = project_key(working_dir(payload))
    url, key = client_config()
    if event == "session-start":
        path = "/v1/context"
        params: dict[str, Any] = {"project": project, "agent": agent if agent != "plain" else "claude-code"}
        if budget:
            params["budget"] = budget
    else:
        prompt = payload.get("prompt")
        prompt = typed_prompt(prompt) if isinstance(prompt, str) else ""
        if not prompt:
            return ""
        path = "/v1/context/prompt"
        params = {"project": project, "prompt": prompt[:2000], "budget": budget}
    remaining = deadline - time.monotonic()
    if remaining <= 0.05:
        raise _Timeout
    answer = get_json(url, key, path, params, remaining)
    markdown = answer.get("markdown") if isinstance(answer, dict) else None
    return markdown if isinstance(markdown, str) else ""


def run_hook(
    event: str,
    agent: str | None = None,
    budget: int | None = None,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    timeout: float = DEADLINE_S,
) -> int:
    """Run one hook; always returns 0. Prints the agent's JSON (or nothing) on `stdout`."""
    deadline = time.monotonic() + timeout
    stdout = stdout or sys.stdout
    alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = None
    if alarm:  # a hard stop, in case a read or a DNS lookup ignores its own timeout

        def _expire(*_: Any) -> None:
            raise _Timeout

        previous = signal.signal(signal.SIGALRM, _expire)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        if event not in EVENTS:
            return 0
        raw = _read_stdin(stdin or sys.stdin.buffer, deadline)
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            payload = {}
        agent = agent or detect_agent(payload)
        markdown = _context_for(event, agent, payload, budget, deadline)
        text = render(agent, event, markdown) if markdown.strip() else ""
        if text:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
            stdout.write(text + "\n")
            stdout.flush()
        if event == "session-start":
            drain_queued_uploads()
    except OverQuota as exc:  # still silent to the agent, but said where `cairn doctor` looks
        from cairn.capture.quota import log_hook_event

        log_hook_event(event, f"no context: {exc}")
        return 0
    except Exception:  # noqa: BLE001 - fail open: the agent must never be blocked or see a traceback
        return 0
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
    return 0


# --- queued transcript uploads --------------------------------------------------------------------
def drain_queued_uploads() -> None:
    """Let the capture module upload transcripts that earlier sessions left queued (e.g. server was down).

    `drain_in_background` only looks at the spool directory and, when something waits, starts a detached
    worker with no pipes to the agent; it never raises. Called after the context is printed.
    """
    if os.environ.get("CAIRN_HOOK_NO_DRAIN"):
        return
    try:
        from cairn.capture.queue import drain_in_background
    except ImportError:  # capture not installed in this build
        return
    drain_in_background()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    event = args.pop(0) if args else ""
    agent: str | None = None
    budget: int | None = None
    try:
        while args:
            flag = args.pop(0)
            if flag == "--agent":
                agent = args.pop(0)
            elif flag == "--budget":
                budget = int(args.pop(0))
    except (IndexError, ValueError):
        return 0
    if agent is not None and agent not in AGENTS:
        agent = None
    return run_hook(event, agent, budget)


if __name__ == "__main__":
    sys.exit(main())

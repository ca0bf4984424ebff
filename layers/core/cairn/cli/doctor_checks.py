"""What `cairn doctor` checks: the server and key, then each agent's hooks and MCP entry.

Every check is a `Check` with a status (ok, warn, fail), what was found and, unless ok, the command or
edit that fixes it. Agents' settings are read where `install-hooks` / `install-mcp` write them (the
agent modules plan those edits, so the paths are theirs); nothing is written here. An agent with no
settings at all is "not set up" (warn), never a failure; what is set up but cannot work is a failure:
a hook whose interpreter is gone, Codex hooks not trusted, an MCP entry whose server or key is refused.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from cairn.capture.quota import last_over_quota, over_quota_line, retry_after_seconds
from cairn.cli.agents import AGENTS
from cairn.cli.agents.base import SERVER_NAME, SettingsError, Wiring, is_ours, read_text
from cairn.cli.agents.codex_trust import disabled_flag, manual_steps, our_hook_states

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str
    detail: str
    fix: str | None = None
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Probe:
    """One server answer: reachable, and whether the key was accepted (None: no key to try)."""

    reachable: bool
    key_ok: bool | None
    detail: str
    over_quota: bool = False


def probe(url: str, key: str | None, timeout: float = 3.0) -> Probe:
    try:
        with httpx.Client(base_url=url.rstrip("/"), timeout=timeout) as http:
            health = http.get("/v1/health")
            if health.status_code != 200:
                return Probe(False, None, f"{url} answered {health.status_code} to /v1/health")
            if not key:
                return Probe(True, None, "no API key")
            me = http.get("/v1/whoami", headers={"Authorization": f"Bearer {key}"})
    except httpx.HTTPError as exc:
        return Probe(False, None, f"cannot reach {url} ({type(exc).__name__})")
    if me.status_code == 200:
        who = me.json()
        return Probe(True, True, f"team {who.get('team_id')}, member {who.get('member')}")
    if me.status_code == 429:  # the key is fine; its team has used up its quota (or is throttled)
        wait = retry_after_seconds(me.headers.get("Retry-After"))
        return Probe(True, None, f"the team is {over_quota_line(wait)}", over_quota=True)
    return Probe(True, False, f"the key was refused ({me.status_code})")


def server_checks(url: str, key: str | None, result: Probe) -> list[Check]:
    if not result.reachable:
        fix = "start it with `cairn serve --detach`, or point the CLI at your server with --url / CAIRN_URL"
        return [Check("server", FAIL, result.detail, fix)]
    checks = [Check("server", OK, f"{url} answers")]
    if result.over_quota:
        fix = "wait, or ask the operator to raise the team's quota (team_daily_quota in infra/config.py)"
        checks.append(Check("quota", FAIL, result.detail, fix))
    elif result.key_ok is None:
        checks.append(Check("key", FAIL, "no API key configured", "pass --key or set CAIRN_API_KEY"))
    elif result.key_ok:
        checks.append(Check("key", OK, result.detail))
    else:
        fix = "use a valid key (--key / CAIRN_API_KEY); an admin creates one with `cairn apikey create`"
        checks.append(Check("key", FAIL, result.detail, fix))
    if (line := last_over_quota()) is not None:
        fix = "the hooks gave the agent no context then; wait, or have the team's quota raised"
        checks.append(Check("hooks quota", WARN, f"hooks.log: {line}", fix))
    return checks


# --- agents ---------------------------------------------------------------------------------------
def _load(path: Path) -> Any:
    text = read_text(path)
    if text is None:
        return None
    if path.suffix == ".toml":
        return tomllib.loads(text)
    return json.loads(text) if path.suffix == ".json" else text


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def _paths(plan) -> list[Path]:
    try:
        return [e.path for e in plan()]
    except SettingsError:
        return []


def _interpreter_problem(command: str) -> str | None:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return f"cannot read the hook command {command!r}"
    if os.sep in program:
        if not Path(program).exists():
            return f"its interpreter {program} does not exist"
        if not os.access(program, os.X_OK):
            return f"its interpreter {program} is not executable"
    elif shutil.which(program) is None:
        return f"{program} is not on PATH"
    return None


def agent_checks(name: str, home: Path, probes: dict[tuple[str, str | None], Probe]) -> list[Check]:
    module = AGENTS[name]
    wiring = Wiring(home=home, python="python3", capture={"stop": True, "session-end": True})
    checks = _hook_checks(name, module, wiring)
    checks += _mcp_checks(name, module, wiring, probes)
    return checks


def _hook_checks(name: str, module, wiring: Wiring) -> list[Check]:
    install = f"cairn install-hooks --agent {name}"
    files = [p for p in _paths(lambda: module.hook_edits(wiring)) if p.exists()]
    commands: list[str] = []
    for path in files:
        try:
            data = _load(path)
        except (ValueError, tomllib.TOMLDecodeError):
            return [Check("hooks", FAIL, f"{path} cannot be read", f"fix its syntax, then `{install}`", name)]
        if isinstance(data, str):  # a plugin file (OpenCode): it runs Cairn itself
            commands += [data] if "cairn" in data else []
            continue
        # the command is "command" for most agents, "bash" for Copilot CLI
        commands += [c for d in _walk(data) if is_ours(c := d.get("command") or d.get("bash"))]
    if not commands:
        return [Check("hooks", WARN, "not installed", install, name)]
    problems = sorted({p for c in commands if "\n" not in c and (p := _interpreter_problem(c))})
    if problems:
        return [Check("hooks", FAIL, "; ".join(problems), f"{install} (from the Cairn you use now)", name)]
    checks = [Check("hooks", OK, f"{len(commands)} installed", agent=name)]
    if name == "codex":
        checks.append(_codex_trust(wiring))
    return checks


def _codex_trust(wiring: Wiring) -> Check:
    from cairn.cli.agents.codex import codex_dir

    hooks_path, config = codex_dir(wiring) / "hooks.json", codex_dir(wiring) / "config.toml"
    wanted = our_hook_states(hooks_path, json.loads(read_text(hooks_path) or "{}"))
    state = (tomllib.loads(read_text(config) or "").get("hooks") or {}).get("state") or {}
    untrusted = [k for k, v in wanted.items() if (state.get(k) or {}).get("trusted_hash") != v]
    fix = f"`cairn install-hooks --agent codex` records the trust again, or {manual_steps()}"
    if untrusted:
        events = ", ".join(sorted({k.rsplit(":", 3)[1] for k in untrusted}))
        return Check("hooks trusted", FAIL, f"Codex skips untrusted hooks: {events}", fix, "codex")
    if flag := disabled_flag(config):
        return Check(
            "hooks trusted", FAIL, f"[features] {flag} = false", f"set {flag} = true in {config}", "codex"
        )
    return Check("hooks trusted", OK, f"{len(wanted)} trusted", agent="codex")


def _mcp_checks(
    name: str, module, wiring: Wiring, probes: dict[tuple[str, str | None], Probe]
) -> list[Check]:
    install = f"cairn install-mcp --client {name}"
    entry: dict[str, Any] | None = None
    for path in _paths(lambda: module.mcp_edits(wiring)):
        try:
            data = _load(path)
        except (ValueError, tomllib.TOMLDecodeError):
            return [Check("mcp", FAIL, f"{path} cannot be read", f"fix its syntax, then `{install}`", name)]
        for d in _walk(data):
            if isinstance(d.get(SERVER_NAME), dict):
                entry = d[SERVER_NAME]
    if entry is None:
        return [Check("mcp", WARN, "not installed", install, name)]
    url = entry.get("url") or entry.get("httpUrl") or entry.get("serverUrl")
    if not isinstance(url, str):
        return [Check("mcp", WARN, "installed, but not as an HTTP server Cairn can check", install, name)]
    headers = entry.get("headers") or entry.get("http_headers") or {}
    auth = str(headers.get("Authorization", "")) if isinstance(headers, dict) else ""
    key = auth.removeprefix("Bearer ").strip() or None
    base = url.removesuffix("/").removesuffix("/mcp")
    result = probes.setdefault((base, key), probe(base, key))
    if not result.reachable:
        return [
            Check(
                "mcp", FAIL, f"{url}: {result.detail}", f"start the server, or `{install} --url <url>`", name
            )
        ]
    if result.key_ok is False:
        return [Check("mcp", FAIL, f"{url}: {result.detail}", f"{install} --key <a valid key>", name)]
    return [Check("mcp", OK, f"{url} reachable" + (", key accepted" if key else ""), agent=name)]

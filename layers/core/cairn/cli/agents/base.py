"""What every agent's wiring shares: the planned file edits, Cairn's hook commands, and JSON/TOML surgery.

Each agent module turns a `Wiring` (where Cairn is and how to run its hooks) into `FileEdit`s: a file's
text before and after. Edits are pure (nothing is written here), so `--dry-run` can show a diff and the
installer can back a file up before it writes. Only Cairn's own entries are ever added or removed:
hooks are recognised by their command (`_OURS`), MCP servers by the name `cairn`; every other setting is
kept. Installing removes Cairn's old entries first, so running it twice changes nothing the second time.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_NAME = "cairn"
# what our hook commands look like, whichever interpreter or wrapper runs them
_OURS = re.compile(
    r"cairn\.cli\.hooks_context|cairn\.capture\.hook\b|cairn\.cli\.main\s+hook\b"
    r"|(?:^|[\s/\\\"'])cairn(?:\.exe)?\s+hook\b"
)


class SettingsError(Exception):
    """A settings file Cairn will not touch (unparseable, or not shaped as the agent documents it)."""


class NotSupported(SettingsError):
    """The agent has no such integration point (e.g. OpenCode runs no command hooks)."""


@dataclass(frozen=True)
class FileEdit:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete the file (only files Cairn itself created and emptied)
    secret: str | None = None  # masked in diffs

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class Wiring:
    home: Path
    python: str  # interpreter that runs the hooks (the one Cairn is installed in)
    url: str = "http://127.0.0.1:8787"
    key: str | None = None
    # capture hooks registered on `cairn hook` by the capture module: name -> accepts --agent
    capture: dict[str, bool] = field(default_factory=dict)

    @property
    def mcp_url(self) -> str:
        return self.url.rstrip("/") + "/mcp"

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def context_command(self, event: str, agent: str) -> str:
        return f"{shlex.quote(self.python)} -m cairn.cli.hooks_context {event} --agent {agent}"

    def capture_command(self, event: str, agent: str) -> str | None:
        """The capture module's own entry point, which skips the `cairn` CLI start-up as ours does."""
        if event not in self.capture:
            return None
        flag = f" --agent {agent}" if self.capture[event] else ""
        return f"{shlex.quote(self.python)} -m cairn.capture.hook {event}{flag}"


def is_ours(command: object) -> bool:
    return isinstance(command, str) and bool(_OURS.search(command))


# --- JSON files -----------------------------------------------------------------------------------
def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); Cairn leaves it alone") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; Cairn leaves it alone")
    return data


def dump_json(data: dict[str, Any], like: str | None) -> str:
    """JSON with the indentation the file already used (2 spaces for new files)."""
    indent: int | str = 2
    if like:
        m = re.search(r"\n([ \t]+)\S", like)
        if m:
            indent = m.group(1) if "\t" in m.group(1) else len(m.group(1))
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def json_edit(path: Path, change, secret: str | None = None, skeleton: Any = None) -> FileEdit:
    """Apply `change(data) -> data` to a JSON file.

    When removing Cairn's entries leaves nothing (or only the `skeleton` Cairn itself writes into a new
    file, such as Cursor's {"version": 1}), the file is deleted: it held nothing but Cairn's entries.
    """
    before = read_text(path)
    original = load_json(path, before)
    data = change(copy.deepcopy(original))
    empty = not data or (skeleton is not None and data == skeleton)
    if empty and (before is None or data != original):
        return FileEdit(path, before, None, secret)
    if before is not None and data == original:
        return FileEdit(path, before, before, secret)  # semantically unchanged: keep the bytes
    return FileEdit(path, before, dump_json(data, before), secret)


# --- hooks in the {"Event": [{"matcher", "hooks": [{"type": "command", ...}]}]} shape ---------------
def remove_grouped_hooks(data: dict[str, Any]) -> dict[str, Any]:
    """Claude Code, Codex and Gemini CLI: drop Cairn's hooks and the groups/events only they filled."""

    def keep(groups: list[Any]) -> list[Any]:
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
            if len(kept) == len(inner):
                kept_groups.append(group)
            elif kept:
                kept_groups.append({**group, "hooks": kept})
        return kept_groups

    return _prune_hooks(data, keep)


def remove_flat_hooks(data: dict[str, Any], command_field: str) -> dict[str, Any]:
    """Cursor and Copilot CLI ({"Event": [{"command" | "bash": ...}]}): drop Cairn's hooks, whose
    command is in `command_field`, and the events only they filled."""
    return _prune_hooks(
        data,
        lambda entries: [e for e in entries if not (isinstance(e, dict) and is_ours(e.get(command_field)))],
    )


def add_flat_hook(data: dict[str, Any], event: str, hook: dict[str, Any]) -> None:
    """Cursor and Copilot CLI: append `hook` to the event's list, refusing a shape Cairn did not expect."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" is not an object; Cairn leaves it alone')
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise SettingsError(f'"hooks.{event}" is not a list; Cairn leaves it alone')
    entries.append(hook)


def _prune_hooks(data: dict[str, Any], keep: Callable[[list[Any]], list[Any]]) -> dict[str, Any]:
    """Apply `keep` to each event's list; drop an event it empties, and "hooks" when none is left."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    removed = False
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue  # e.g. Gemini's "enabled": true
        kept = keep(entries)
        if kept != entries:
            removed = True
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if removed and not hooks:
        del data["hooks"]
    return data


def add_grouped_hook(data: dict[str, Any], event: str, hook: dict[str, Any], matcher: str | None) -> None:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" is not an object; Cairn leaves it alone')
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f'"hooks.{event}" is not a list; Cairn leaves it alone')
    group: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
    group["hooks"] = [hook]
    groups.append(group)


# --- MCP servers in {"<key>": {"cairn": {...}}} -----------------------------------------------------
def set_server(data: dict[str, Any], key: str, server: dict[str, Any]) -> dict[str, Any]:
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise SettingsError(f'"{key}" is not an object; Cairn leaves it alone')
    servers[SERVER_NAME] = server
    return data


def remove_server(data: dict[str, Any], key: str) -> dict[str, Any]:
    servers = data.get(key)
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del data[key]
    return data


# --- TOML (Codex): text surgery, since no TOML writer here keeps comments ------------------------
_TABLE = re.compile(r"^\s*\[")


def toml_edit(path: Path, table: str, body: dict[str, Any] | None, secret: str | None = None) -> FileEdit:
    """Replace (or, with body None, remove) `[table]` and its sub-tables; the rest of the text is kept."""
    before = read_text(path)
    text = before or ""
    try:
        original = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML ({exc}); Cairn leaves it alone") from exc
    header = re.compile(rf"^\s*\[{re.escape(table)}(?:\.[^\]]+)?\]\s*(?:#.*)?$")
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    for line in lines:
        if _TABLE.match(line):
            skipping = bool(header.match(line))
            if skipping:
                while out and not out[-1].strip():  # the blank line Cairn put before its table
                    out.pop()
        if not skipping:
            out.append(line)
    new = "".join(out)
    if new and not new.endswith("\n"):
        new += "\n"
    if body is not None:
        new = new.rstrip("\n") + ("\n\n" if new.strip() else "") + f"[{table}]\n" + _toml_body(body)
    try:
        parsed = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: cannot place [{table}] safely ({exc}); Cairn leaves it alone") from exc
    if body is None and _dig(parsed, table) is not None:
        raise SettingsError(f"{path} defines {table} in a form Cairn does not edit; remove it by hand")
    if before is not None and parsed == original:
        return FileEdit(path, before, before, secret)
    if body is None and not new.strip():  # the file held nothing but Cairn's table
        return FileEdit(path, before, None, secret)
    return FileEdit(path, before, new, secret)


def _dig(data: dict[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_body(body: dict[str, Any]) -> str:
    return "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in body.items())

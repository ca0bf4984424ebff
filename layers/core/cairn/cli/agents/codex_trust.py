"""Codex hook trust: record Cairn's hooks as reviewed, exactly as Codex's own `/hooks` review does.

Codex (0.1xx) runs a hook from `~/.codex/hooks.json` only when `config.toml` holds, for that hook,
`[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash = "sha256:<hex>"` equal to the
hash of the hook's normalised identity; otherwise `codex exec` silently skips it. The identity and the
hash follow codex-rs (hooks/src/engine/discovery.rs `command_hook_hash`, config `version_for_toml`):

    {"event_name": "<snake_case event>", "matcher": <kept for SessionStart/tool events only>,
     "hooks": [{"type": "command", "command": ..., "timeout": <seconds, default 600, min 1>,
                "async": false, "statusMessage": ... (only when set)}]}

serialised as JSON with keys sorted and no spaces, then SHA-256. A changed command changes the hash, so
re-installing records trust again; an unchanged one leaves config.toml byte for byte as it was.
Hooks also need the feature on in versions where it is off by default: `[features] codex_hooks = true`
(newer versions call it `hooks`, keep `codex_hooks` as an alias and enable it by default).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from cairn.cli.agents.base import FileEdit, SettingsError, is_ours, read_text

EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
}
# events whose matcher is part of the identity (Codex ignores it on the others)
_MATCHER_EVENTS = frozenset(
    {"PreToolUse", "PermissionRequest", "PostToolUse", "SessionStart", "SubagentStart", "SubagentStop"}
)
FEATURE_FLAGS = ("codex_hooks", "hooks")
_STATE_HEADER = re.compile(r'^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*")\s*\]\s*(?:#.*)?$')
_ANY_HEADER = re.compile(r"^\s*\[")
_FEATURES_HEADER = re.compile(r"^\s*\[\s*features\s*\]\s*(?:#.*)?$")
# the flag line Cairn writes, marked so that uninstalling removes it and nothing the user wrote
FLAG_LINE = "codex_hooks = true  # added by cairn install-hooks (older Codex runs no hooks without it)\n"


def trusted_hash(event: str, hook: dict[str, Any], matcher: str | None = None) -> str:
    """The `trusted_hash` Codex expects for one command hook of `event` (its hooks.json event name)."""
    handler: dict[str, Any] = {
        "type": "command",
        "command": hook["command"],
        "timeout": max(1, int(hook.get("timeout") or hook.get("timeoutSec") or 600)),
        "async": bool(hook.get("async", False)),
    }
    if hook.get("statusMessage") is not None:
        handler["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [handler]}
    if matcher is not None and event in _MATCHER_EVENTS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def hook_key(hooks_path: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_path}:{EVENT_LABELS[event]}:{group}:{handler}"


def our_hook_states(hooks_path: Path, data: dict[str, Any]) -> dict[str, str]:
    """key -> trusted_hash for every Cairn command hook in a parsed hooks.json."""
    states: dict[str, str] = {}
    hooks = data.get("hooks")
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        if event not in EVENT_LABELS or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else ()):
                if isinstance(hook, dict) and hook.get("type") == "command" and is_ours(hook.get("command")):
                    matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
                    states[hook_key(hooks_path, event, g, h)] = trusted_hash(event, hook, matcher)
    return states


def trust_edit(
    config: Path, hooks_path: Path, old: dict[str, Any], new: dict[str, Any], base: FileEdit | None = None
) -> FileEdit:
    """config.toml with trust recorded for Cairn's hooks in `new` (and dropped for those only in `old`).

    `base` is an edit of the same file planned before this one (the MCP table), which this one extends.
    """
    before = base.before if base is not None else read_text(config)
    text = (base.after if base is not None else before) or ""
    try:
        original = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{config} is not valid TOML ({exc}); Cairn leaves it alone") from exc
    wanted = our_hook_states(hooks_path, new)
    ours = set(our_hook_states(hooks_path, old)) | set(wanted)
    current = _states(original)
    out = text
    if any(current.get(k) != v for k, v in wanted.items()) or (ours - set(wanted)) & set(current):
        out = _without_tables(text, ours)
        out += "".join(
            f"\n[hooks.state.{json.dumps(k)}]\ntrusted_hash = {json.dumps(v)}\n" for k, v in wanted.items()
        )
    out = _with_feature_flag(out) if wanted else _without_feature_flag(out)
    out = out.lstrip("\n")
    try:
        parsed = tomllib.loads(out)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{config}: cannot record hook trust safely ({exc}); {manual_steps()}") from exc
    if any(_states(parsed).get(k) != v for k, v in wanted.items()):
        raise SettingsError(f"{config} defines hooks.state in a form Cairn does not edit; {manual_steps()}")
    if out == text:
        return base or FileEdit(config, before, before)
    return FileEdit(config, before, out if out.strip() else None, base.secret if base else None)


def disabled_flag(config: Path) -> str | None:
    """The feature flag the user turned off (hooks then never run, trusted or not), if any."""
    try:
        data = tomllib.loads(read_text(config) or "")
    except tomllib.TOMLDecodeError:
        return None
    features = data.get("features")
    for flag in FEATURE_FLAGS:
        if isinstance(features, dict) and features.get(flag) is False:
            return flag
    return None


def manual_steps() -> str:
    return (
        "open `codex`, run /hooks and trust Cairn's hooks"
        " (or run `codex exec --dangerously-bypass-hook-trust`)"
    )


def _states(data: dict[str, Any]) -> dict[str, str | None]:
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {k: v.get("trusted_hash") if isinstance(v, dict) else None for k, v in state.items()}


def _without_tables(text: str, keys: set[str]) -> str:
    """Drop the `[hooks.state."<key>"]` tables of `keys` (and the blank line Cairn put before each)."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if _ANY_HEADER.match(line):
            m = _STATE_HEADER.match(line)
            skipping = bool(m) and json.loads(m.group(1)) in keys
            if skipping:
                while out and not out[-1].strip():
                    out.pop()
        if not skipping:
            out.append(line)
    new = "".join(out)
    return new if not new or new.endswith("\n") else new + "\n"


def _with_feature_flag(text: str) -> str:
    """`codex_hooks = true` under [features] unless a flag is already set either way (the user's call)."""
    features = tomllib.loads(text).get("features")
    if isinstance(features, dict) and any(flag in features for flag in FEATURE_FLAGS):
        return text
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if _FEATURES_HEADER.match(line):
            lines.insert(i + 1, FLAG_LINE)
            return "".join(lines)
    if isinstance(features, dict):  # features given as dotted keys or inline: leave it to the user
        return text
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + "[features]\n" + FLAG_LINE


def _without_feature_flag(text: str) -> str:
    """Uninstall: drop Cairn's flag line, and the [features] table when Cairn's line was all it held."""
    lines = text.splitlines(keepends=True)
    if FLAG_LINE not in lines:
        return text
    at = lines.index(FLAG_LINE)
    del lines[at]
    header = at - 1
    end = next((k for k in range(at, len(lines)) if _ANY_HEADER.match(lines[k])), len(lines))
    if header >= 0 and _FEATURES_HEADER.match(lines[header]) and not any(ln.strip() for ln in lines[at:end]):
        was_last = end == len(lines)
        del lines[header:end]
        if was_last:  # drop the blank lines Cairn put before it
            while lines and not lines[-1].strip():
                lines.pop()
    return "".join(lines)

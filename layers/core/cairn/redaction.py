"""Secret redaction: what leaves a developer's machine or lands in memory must not carry credentials.

`redact(text)` replaces secrets with `[REDACTED:<kind>]` and counts them by kind (never the secret
itself). `redact_bytes_jsonl(data)` does the same inside every string value of a JSONL transcript, so
the result still parses line by line. Rules go from specific (a token format with a known prefix) to
generic (`PASSWORD=...` assignments, then high-entropy strings), so the most precise kind is reported.
The generic rules are deliberately conservative about code: `token = get_token()`, `password: str`,
`api_key=settings.API_KEY`, git SHAs and UUIDs survive.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

PLACEHOLDER = "[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class RedactionResult:
    text: str
    counts: Mapping[str, int] = field(default_factory=dict)  # kind -> how many were replaced

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0  # the part of the match that is the secret
    triggers: tuple[str, ...] = ()  # cheap substring pre-check (on lower-cased text); empty = always run
    accept: Callable[[_Original], bool] | None = None
    on_lowered: re.Pattern[str] | None = None  # match this on text.lower() instead, when offsets agree


class _Original:
    """A match found on lower-cased text, read back from the original text (same offsets)."""

    __slots__ = ("_match", "string")

    def __init__(self, match: re.Match[str], original: str) -> None:
        self._match = match
        self.string = original

    def group(self, name: int | str = 0) -> str | None:
        start, end = self._match.span(name)
        return None if start < 0 else self.string[start:end]

    def start(self, name: int | str = 0) -> int:
        return self._match.start(name)

    def end(self, name: int | str = 0) -> int:
        return self._match.end(name)

    def span(self, name: int | str = 0) -> tuple[int, int]:
        return self._match.span(name)


def _mixed(match: _Original) -> bool:
    """Real keys mix letters and digits; prose like 'sk-this-is-not-a-key-just-words' does not."""
    token = match.group(0) or ""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


# --- generic assignments --------------------------------------------------------------------------
# The match starts at the credential word itself (DB_PASSWORD matches from PASSWORD): a leading
# `[name chars]*` would make the engine retry at every position, 50x slower on large transcripts.
_CREDENTIAL_WORD = (
    r"(?:password|passwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key"
    r"|credentials?|auth[_\-]?key|signing[_\-]?key|encryption[_\-]?key|(?<![a-z])pwd)"
)
# what a text holding a credential's key holds, lower-cased: the assignment and table-row rules' pre-check
_CREDENTIAL_TRIGGERS = ("pass", "secret", "token", "key", "credential", "pwd")
_ASSIGNMENT_SOURCE = rf"""(?x)
    (?P<key>{_CREDENTIAL_WORD}[A-Za-z0-9_.\-]*["']?)
    (?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)
    (?:
        (?P<quote>["'`])(?P<qval>[^"'`\n]{{4,400}})(?P=quote)
      | (?P<uval>[^\s"'`,;(){{}}\[\]<>]{{4,400}})
    )
    """
# Matched against lower-cased text (same offsets), 4x faster than re.IGNORECASE on an alternation;
# the ignore-case twin serves the rare text whose lower-casing changes its length.
_ASSIGNMENT = re.compile(_ASSIGNMENT_SOURCE)
_ASSIGNMENT_ANY_CASE = re.compile(_ASSIGNMENT_SOURCE, re.I)
# ... and a two-column table's row, as `vault read`, `vault kv get` or `op item get` print a secret: the
# credential's key, two spaces or more, and its value as the row's one other token
_COLUMN = re.compile(
    rf"(?im)^[ \t]*[A-Za-z0-9_.\-]*{_CREDENTIAL_WORD}[A-Za-z0-9_.\-]*[ \t]{{2,}}(?P<cell>\S{{4,400}})[ \t]*$"
)
_NOT_SECRET_VALUES = frozenset(
    {
        "null",
        "none",
        "true",
        "false",
        "undefined",
        "nil",
        "string",
        "required",
        "optional",
        "redacted",
        "xxxx",
        "xxxxxx",
        "xxxxxxxx",
        "****",
        "******",
        "********",
        "changeme",
        "example",
        "placeholder",
    }
)
_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")  # settings.API_KEY


_VERSION_RANGE = re.compile(r"[~^<>=v]{0,2}\d+(?:\.\d+){1,3}(?:-[\w.]+)?")


def _names_no_secret(value: str) -> bool:
    """A placeholder ("null", "<redacted>", "${API_KEY}") or a reference to where the secret lives
    (`$TOKEN`, `settings.API_KEY`): what a credential's key may be given that is not the secret."""
    lowered = value.lower().strip()
    if lowered in _NOT_SECRET_VALUES or lowered.startswith(
        ("[redacted", "<", "{{", "${", "$(", "%(", "process.env")
    ):
        return True
    return value.startswith("$") or bool(_REFERENCE.match(value))


def _column_value(match: _Original) -> bool:
    """A table row's value that may be a secret (`_COLUMN`)."""
    return not _names_no_secret(match.group("cell"))


def _assignment_value(match: _Original) -> bool:
    quoted = match.group("qval") is not None
    value = match.group("qval") if quoted else match.group("uval")
    if _names_no_secret(value):
        return False
    if _VERSION_RANGE.fullmatch(value.strip()):
        return False  # a dependency's version ("js-tokens": "^4.0.0"), not a credential
    end = match.end()
    following = match.string[end : end + 1]
    if not quoted:
        if following in ("(", "[", "."):
            return False  # get_token(), os.environ[...]
        if re.fullmatch(r"\d{1,12}", value):
            return False  # a count or a limit (max_output_tokens: 12000), not a credential
        if value.startswith(("&", "*")):
            return False  # Go's `TokenUsage: &agent.TokenUsage{`: an address, not a literal
        if re.fullmatch(r"[A-Za-z_]+", value):
            return False  # an identifier (password=password, token: str), not a literal
    return True  # a quoted literal is redacted even when it reads like words: passphrases do


# --- high entropy ----------------------------------------------------------------------------------
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{32,}(?![A-Za-z0-9+/=_\-])")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DIGEST_PREFIX = re.compile(r"(?:sha1|sha256|sha384|sha512|md5|commit|blob|tree)[:\-= ]$", re.I)
_DIGEST_TOKEN = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)[-_]", re.I)  # sha512-<base64> integrity
_ENTROPY_HEX = 3.3  # bits/char; random hex is ~3.7-3.9 at 32+ chars
_ENTROPY_B64 = 4.3  # random base64 is ~4.9-5.5 at 32+ chars; long camelCase words stay below


def shannon_entropy(value: str) -> float:
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _high_entropy(match: _Original) -> bool:
    token = match.group(0)
    if _UUID.match(token):
        return False
    start = match.start()
    if _DIGEST_PREFIX.search(match.string[max(0, start - 8) : start]) or _DIGEST_TOKEN.match(token):
        return False  # content digests (sha256:..., integrity hashes) are not secrets
    if _HEX.match(token):
        # 40 hex = a git SHA; hex digests of other lengths only when they look random enough
        return len(token) != 40 and shannon_entropy(token.lower()) >= _ENTROPY_HEX
    if token.count("/") >= 2 and all(len(part) >= 2 for part in token.strip("/").split("/")):
        return False  # a path (a/b/c), not a key
    if token.count("-") + token.count("_") >= len(token) / 8:
        return False  # kebab/snake identifiers: some-long-package-name_with_words
    has_digit = any(c.isdigit() for c in token)
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    return has_digit and has_upper and has_lower and shannon_entropy(token) >= _ENTROPY_B64


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
            r"(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)"
        ),
        triggers=("private key",),
    ),
    _Rule("anthropic_key", re.compile(r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{20,}"), triggers=("sk-ant-",)),
    _Rule(
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
        triggers=("sk-",),
        accept=_mixed,
    ),
    _Rule(
        "aws_access_key_id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])"
        ),
        triggers=(
            "akia",
            "asia",
            "abia",
            "acca",
            "agpa",
            "aida",
            "aipa",
            "anpa",
            "anva",
            "aroa",
            "apka",
            "asca",
        ),
    ),
    _Rule(
        "aws_secret_access_key",
        re.compile(
            r"(?i)secret_?(?:access)?_?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        group="secret",
        triggers=("secret",),
    ),
    _Rule(
        "github_token",
        re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
        triggers=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Rule(
        "gitlab_token",
        re.compile(r"(?<![A-Za-z0-9])(?:glpat|gldt|glrt|glptt|glsoat|gloas)-[A-Za-z0-9_\-]{20,}"),
        triggers=("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "gloas-"),
    ),
    _Rule(
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
        triggers=("hooks.slack.com",),
    ),
    _Rule("slack_token", re.compile(r"(?<![A-Za-z0-9])xox[abposrce]-[A-Za-z0-9\-]{10,}"), triggers=("xox",)),
    _Rule(
        "stripe_key",
        re.compile(r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"),
        triggers=("_live_", "_test_", "whsec_"),
    ),
    _Rule("google_api_key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}"), triggers=("aiza",)),
    _Rule("npm_token", re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), triggers=("npm_",)),
    _Rule("huggingface_token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{34,}"), triggers=("hf_",)),
    _Rule(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        triggers=("eyj",),
    ),
    _Rule(
        "url_password",
        re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@\"'<>]*:(?P<password>[^\s@/\"'<>]{1,256})@"),
        group="password",
        triggers=("://",),
        accept=lambda m: not m.group("password").startswith("[REDACTED"),
    ),
    _Rule(
        "bearer_token",
        re.compile(
            r"(?i)(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+|\bbearer\s+)"
            r"(?P<token>[A-Za-z0-9._~+/\-]{8,}=*)"
        ),
        group="token",
        triggers=("bearer", "authorization"),
        accept=lambda m: (
            not m.group("token").startswith("[REDACTED") and any(c.isdigit() for c in m.group("token"))
        ),
    ),
    _Rule(
        "secret_assignment",
        _ASSIGNMENT_ANY_CASE,
        group="value",
        triggers=_CREDENTIAL_TRIGGERS,
        accept=_assignment_value,
        on_lowered=_ASSIGNMENT,
    ),
    _Rule(
        "secret_column",
        _COLUMN,
        group="cell",
        triggers=_CREDENTIAL_TRIGGERS,
        accept=_column_value,
    ),
    _Rule("high_entropy", _TOKEN, accept=_high_entropy),
)


# Each rule with its substring pre-check as one regex of its escaped triggers: the same test as
# `any(t in lowered for t in triggers)`, made in C. Redacting ~80k strings per 20 MB transcript set
# spent a third of its time in that generator.
_TRIGGERED: tuple[tuple[_Rule, re.Pattern[str] | None], ...] = tuple(
    (rule, re.compile("|".join(map(re.escape, rule.triggers))) if rule.triggers else None) for rule in _RULES
)


# A secret a rule found by its context (`TOKEN=…`, a URL's password, a bearer header) is no less one where
# it appears again without that context: the agent repeating it, a command passing it on. A value that
# reads as a credential (one token of a credential's characters, letters and digits both) is redacted
# wherever else the text, or the transcript, holds it. A word is left where no rule found it: `password:
# admin` does not redact every "admin", nor a name the assignment rule took for a value (`accessToken:`,
# `ENTIRE_CHECKPOINT_TOKEN`) every mention of that name.
REPEATED_CHARS = 5
_CREDENTIAL_CHARS = re.compile(r"[A-Za-z0-9._~+/=-]+")
_SECRET_PARTS = re.compile(r"[-_.~+/=]+")


def _repeatable(value: str) -> bool:
    return (
        len(value) >= REPEATED_CHARS
        and _CREDENTIAL_CHARS.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def _apply(
    rule: _Rule, text: str, counts: Counter[str], lowered: str, found: dict[str, str] | None = None
) -> str:
    if rule.on_lowered is not None and len(lowered) == len(text):
        matches = list(rule.on_lowered.finditer(lowered))
    else:
        matches = list(rule.pattern.finditer(text))
    if not matches:
        return text
    pieces: list[str] = []
    cursor = 0
    for match in matches:
        if rule.accept is not None and not rule.accept(_Original(match, text)):
            continue
        if rule.group == "value":  # the assignment rule: one of two alternative groups holds the secret
            group = "qval" if match.group("qval") is not None else "uval"
        else:
            group = rule.group
        start, end = match.span(group)
        # a rule that finds the secret by what surrounds it (a group of its match): elsewhere no rule would
        if found is not None and rule.group != 0 and _repeatable(secret := text[start:end]):
            # ... and a part of it that reads as a credential itself: a retelling shortens a token
            # (`purge-mk35q` of `purge-mk35q-a81f`), and a part shown is a part of the secret leaked
            for part in (secret, *_SECRET_PARTS.split(secret)):
                if _repeatable(part):
                    found.setdefault(part, rule.kind)
        pieces.append(text[cursor:start])
        pieces.append(PLACEHOLDER.format(kind=rule.kind))
        cursor = end
        counts[rule.kind] += 1
    if not cursor:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def redact(text: str, found: dict[str, str] | None = None) -> RedactionResult:
    """Replace every secret found in `text` with `[REDACTED:<kind>]`, and its repeats (`_repeatable`)
    elsewhere in `text`. `found` gathers each repeatable secret with its kind, for a caller that redacts
    its repeats across many texts (`redact_bytes_jsonl`)."""
    counts: Counter[str] = Counter()
    if not text:
        return RedactionResult(text, {})
    mine: dict[str, str] = {}
    lowered = text.lower()
    for rule, trigger in _TRIGGERED:
        if trigger is not None and trigger.search(lowered) is None:
            continue
        before = text
        text = _apply(rule, text, counts, lowered, mine)
        if text is not before:
            lowered = text.lower()
    if mine:
        text = _again(text, _repeats(mine), mine, counts)
        if found is not None:
            for secret, kind in mine.items():
                found.setdefault(secret, kind)
    return RedactionResult(text, dict(counts))


def _repeats(found: Mapping[str, str]) -> re.Pattern[str]:
    """One pattern for the secrets' repeats, each whole (not inside a longer token), longest first."""
    secrets = sorted(found, key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, secrets)) + r")(?![A-Za-z0-9])")


def _again(text: str, repeats: re.Pattern[str], found: Mapping[str, str], counts: Counter[str]) -> str:
    """`text` with each repeat of a secret found before replaced, counted under the kind it was found as."""

    def placeholder(match: re.Match[str]) -> str:
        kind = found[match.group(0)]
        counts[kind] += 1
        return PLACEHOLDER.format(kind=kind)

    return repeats.sub(placeholder, text)


def repeats_redactor(found: Mapping[str, str]) -> Callable[[Any], Any] | None:
    """For the secrets `found` across many texts (`redact`'s `found`), what redacts their repeats inside a
    text or a JSON-like value (structural ids aside); None when there are none."""
    if not found:
        return None
    repeats = _repeats(found)
    return lambda value: _again_value(value, repeats, found, Counter())


# Values the transcript format itself needs, or opaque blobs that are not user data (thinking
# signatures, encrypted reasoning): redacting them would break threading and inflate counts.
_STRUCTURAL_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "leafUuid",
        "sessionId",
        "session_id",
        "id",
        "tool_use_id",
        "call_id",
        "requestId",
        "messageId",
        "turn_id",
        "signature",
        "encrypted_content",
        "timestamp",
        "type",
        "role",
        "model",
        "version",
        "cli_version",
        "commit_hash",
        "agentId",
        "toolUseID",
        "parentToolUseID",
        # GitHub Copilot CLI's events.jsonl: the ids that pair a tool call with its result, thread
        # events and name what a rewind removes, and its opaque reasoning blob
        "toolCallId",
        "parentToolCallId",
        "parentId",
        "interactionId",
        "turnId",
        "hookInvocationId",
        "apiCallId",
        "serviceRequestId",
        "originatingMessageId",
        "upToEventId",
        "eventIds",
        "headCommit",
        "reasoningOpaque",
        # OpenCode's messages and parts: the ids that thread them and pair a tool call with its
        # result (`toolu_vrtx_…` call ids read as high-entropy), and the provider's encrypted reasoning
        "callID",
        "sessionID",
        "messageID",
        "parentID",
        "reasoningEncryptedContent",
        "itemId",
    }
)


def redact_value(
    value: Any, counts: Counter[str], key: str | None = None, found: dict[str, str] | None = None
) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists), leaving structural ids alone;
    `counts` is updated with what was redacted, `found` with the repeatable secrets (`redact`)."""

    def redacted(text: str) -> str:
        result = redact(text, found)
        if result.counts:  # most strings hold no secret: skip the Counter update (~1 s per 20 MB)
            counts.update(result.counts)
        return result.text

    return _each_string(value, redacted, key)


def _again_value(value: Any, repeats: re.Pattern[str], found: Mapping[str, str], counts: Counter[str]) -> Any:
    """`_again` inside every string of a JSON-like value, structural ids aside."""
    return _each_string(value, lambda text: _again(text, repeats, found, counts))


def _each_string(value: Any, change: Callable[[str], str], key: str | None = None) -> Any:
    """`value` (a JSON-like value) with `change` made to every string in it but a structural id's."""
    if isinstance(value, str):
        return value if key in _STRUCTURAL_KEYS else change(value)
    if isinstance(value, dict):
        return {k: _each_string(v, change, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_string(v, change, key) for v in value]
    return value


def redact_bytes_jsonl(data: bytes) -> tuple[bytes, dict[str, int]]:
    """Redact a JSONL transcript line by line, inside string values, keeping every line valid JSON.

    Lines without secrets are kept byte for byte; a changed line is re-serialised compactly. A line
    that is not JSON is redacted as plain text (it was not parseable before either). A transcript
    written as one pretty-printed JSON document (`opencode export`, older Gemini CLI sessions) is
    redacted as that document, so its structural keys are known as on a JSON line; the lines after it
    (project files a capture appends) are JSON lines. A second pass redacts what a rule found in one
    place wherever else the transcript repeats it (`_repeatable`): a token read from a file and then
    quoted in the agent's reply or passed to a command.
    """
    found: dict[str, str] = {}
    document = _pretty_document(data)
    if document is None:
        out, counts = _redact_lines(data, found)
        return _redact_repeats(out, found, counts)
    head, obj, original, rest = document
    counts: Counter[str] = Counter()
    redacted = redact_value(obj, counts, found=found)
    tail, tail_counts = _redact_lines(rest, found)
    counts.update(tail_counts)
    if found:
        redacted = _again_value(redacted, _repeats(found), found, counts)
        tail, tail_counts = _redact_repeats(tail, found, {})
        counts.update(tail_counts)
    # re-serialised as the agents write it (JSON.stringify(…, null, 2)) only when something changed
    body = json.dumps(redacted, ensure_ascii=False, indent=2).encode("utf-8") if counts else original
    return head + body + tail, dict(counts)


def _redact_repeats(
    data: bytes, found: Mapping[str, str], counts: Mapping[str, int]
) -> tuple[bytes, dict[str, int]]:
    """`data`'s JSON lines with each repeat of a secret `found` redacted (the lines that hold none kept
    byte for byte), and `counts` with those repeats added."""
    total: Counter[str] = Counter(counts)
    if not found:
        return data, dict(total)
    repeats = _repeats(found)
    # a cheap test on the raw bytes first: most lines hold none of the secrets
    quick = re.compile(b"|".join(re.escape(secret.encode("utf-8")) for secret in found))
    out: list[bytes] = []
    for raw in data.split(b"\n"):
        if quick.search(raw) is None:
            out.append(raw)
            continue
        text = raw.decode("utf-8", "replace")
        line_counts: Counter[str] = Counter()
        try:
            obj = json.loads(text)
        except ValueError:
            again = _again(text, repeats, found, line_counts)
            out.append(again.encode("utf-8") if line_counts else raw)
        else:
            again_obj = _again_value(obj, repeats, found, line_counts)
            out.append(
                json.dumps(again_obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                if line_counts
                else raw
            )
        total.update(line_counts)
    return b"\n".join(out), dict(total)


def _pretty_document(data: bytes) -> tuple[bytes, Any, bytes, bytes] | None:
    """(what precedes it, the document, its bytes, what follows it) when `data` starts with a JSON
    document spread over lines (its first line a lone `{`); None for JSON lines."""
    body = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body.split(b"\n", 1)[0].strip() != b"{":
        return None
    text = body.decode("utf-8", "replace")
    try:
        obj, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    original = text[:end].encode("utf-8")
    return data[: len(data) - len(body)], obj, original, text[end:].encode("utf-8")


def _redact_lines(data: bytes, found: dict[str, str] | None = None) -> tuple[bytes, dict[str, int]]:
    counts: Counter[str] = Counter()
    out: list[bytes] = []
    pos, size = 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        stop = size if end == -1 else end
        out.append(_redact_line(data[pos:stop], counts, found))
        if end != -1:
            out.append(b"\n")
        pos = stop + 1
    return b"".join(out), dict(counts)


def _redact_line(raw: bytes, counts: Counter[str], found: dict[str, str] | None = None) -> bytes:
    if not raw.strip():
        return raw
    text = raw.decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        result = redact(text, found)
        counts.update(result.counts)
        return result.text.encode("utf-8") if result.counts else raw
    line_counts: Counter[str] = Counter()
    redacted = redact_value(obj, line_counts, found=found)
    if not line_counts:
        return raw
    counts.update(line_counts)
    return json.dumps(redacted, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

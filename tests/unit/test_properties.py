"""Hypothesis properties of the parts hostile input reaches first: transcript parsing, redaction, the
memory codec and the project key. Each holds for any input, not only the fixtures we have."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from cairn.domain.codec import decode_memory, encode_memory
from cairn.domain.errors import InvalidInput, PayloadTooLarge
from cairn.domain.models import Memory, MemoryKind, Provenance, Scope
from cairn.projects import normalise_remote
from cairn.redaction import redact
from cairn.transcripts import parse_transcript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.unit
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
record = st.dictionaries(
    st.sampled_from(["type", "message", "payload", "sessionId", "uuid", "role", "content", "timestamp"])
    | st.text(max_size=10),
    json_values,
    max_size=6,
)


@FAST
@given(st.binary(max_size=2_000))
def test_any_bytes_are_parsed_or_refused_with_a_clear_error(data: bytes):
    try:
        parse_transcript(data)
    except (InvalidInput, PayloadTooLarge) as exc:
        assert exc.message and "\n" not in exc.message


@FAST
@given(
    st.lists(record, min_size=1, max_size=8), st.sampled_from([None, "claude-code", "codex", "gemini-cli"])
)
def test_any_json_lines_are_parsed_or_refused_with_a_clear_error(records, agent):
    data = "\n".join(json.dumps(r) for r in records).encode()
    try:
        parsed = parse_transcript(data, agent)
    except (InvalidInput, PayloadTooLarge) as exc:
        assert exc.message
    else:
        assert all(e.line_no >= 1 for e in parsed.events)


SECRET = "gh" + "p_" + "Zx9Q2mLk8Vt4Rb7Np3Wc6Hy1Jd5Gf0KsAeab"  # a classic GitHub token's shape
prose = st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=80)


@FAST
@given(prose, prose)
def test_a_secret_never_survives_redaction_whatever_surrounds_it(before: str, after: str):
    assert SECRET not in redact(f"{before} {SECRET} {after}").text


@FAST
@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str):
    once = redact(text).text
    assert redact(once).text == once


memories = st.builds(
    Memory,
    id=st.from_regex(r"mem_[a-z0-9]{8}", fullmatch=True),
    team_id=st.from_regex(r"team_[a-z0-9]{6}", fullmatch=True),
    kind=st.sampled_from(MemoryKind),
    content=st.text(min_size=1, max_size=200),
    scope=st.sampled_from(Scope),
    project=st.none() | st.text(min_size=1, max_size=30),
    title=st.none() | st.text(max_size=40),
    tags=st.lists(st.text(min_size=1, max_size=12), max_size=4).map(tuple),
    pinned=st.booleans(),
    confidence=st.floats(min_value=0, max_value=1),
    details=st.dictionaries(st.text(min_size=1, max_size=10), json_values, max_size=4),
    provenance=st.builds(Provenance, session_id=st.none() | st.text(max_size=20)),
    created_at=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ),
)


@FAST
@given(memories)
def test_a_memory_survives_the_codec_and_a_json_round_trip(m: Memory):
    m = Memory(
        **{
            **{f: getattr(m, f) for f in m.__dataclass_fields__},
            "updated_at": m.created_at,
            "valid_from": m.created_at,
        }
    )
    assert decode_memory(json.loads(json.dumps(encode_memory(m)))) == m


hosts = st.sampled_from(["github.com", "GitHub.com", "gitlab.example.org"])
names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}[A-Za-z0-9]", fullmatch=True).filter(
    lambda s: not s.endswith(".git")
)


@FAST
@given(hosts, names, names)
def test_every_spelling_of_a_remote_gives_one_project_key(host: str, org: str, repo: str):
    spellings = [
        f"git@{host}:{org}/{repo}.git",
        f"https://{host}/{org}/{repo}",
        f"https://user:token@{host}/{org}/{repo}.git/",
        f"ssh://git@{host}:22/{org}/{repo}.git",
    ]
    keys = {normalise_remote(s) for s in spellings}
    assert keys == {f"{host}/{org}/{repo}".lower()}
    assert normalise_remote(keys.pop()) == f"{host}/{org}/{repo}".lower()

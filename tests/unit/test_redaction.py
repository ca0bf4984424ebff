"""Secret redaction: realistic (fake, well-formed) secrets go, ordinary code and identifiers stay.

The fake secrets are assembled from pieces at run time so this file itself does not trip secret
scanners; each has the real format's prefix, length and alphabet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cairn.redaction import redact, redact_bytes_jsonl, shannon_entropy
from cairn.transcripts import parse_transcript

from tests.paths import TRANSCRIPTS

pytestmark = pytest.mark.unit

B62 = "Zx9Q2mLk8Vt4Rb7Np3Wc6Hy1Jd5Gf0KsAe"  # 34 mixed characters, high entropy

AWS_KEY_ID = "AKIA" + "Q3EGRTYW7PLMZX5N"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY9Xq2Lk4Tz8"  # 40 characters
GITHUB_PAT_CLASSIC = "gh" + "p_" + B62 + "ab"
GITHUB_OAUTH = "gh" + "o_" + B62 + "cd"
GITHUB_FINE_GRAINED = "github" + "_pat_" + "11ABCDEFG0" + "x" * 12 + "_" + B62 + "Kq7Lm2Np9"
GITLAB = "gl" + "pat-" + "xY7zK2mQ9vL4nR8wT3bH"
SLACK_BOT = "xo" + "xb-" + "2468013579-1357924680-" + "Kq7Lm2Np9Rs4Tv6Wx8Yz1Ab"
SLACK_WEBHOOK = "https://hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + "Kq7Lm2Np9Rs4Tv6Wx8Yz1Ab"
STRIPE = "sk" + "_live_" + "51Hx" + B62[:24]
OPENAI = "sk-" + "proj-" + B62 + "_" + B62[::-1] + "T3BlbkFJ"
OPENAI_LEGACY = "sk-" + B62 + "T3BlbkFJ" + "9q8w7e"
ANTHROPIC = "sk-" + "ant-api03-" + B62 + "-" + B62[::-1] + "AA"
GOOGLE = "AI" + "za" + "SyD8" + B62[:31]
NPM = "np" + "m_" + B62 + "x9"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUiLCJpYXQiOjE1MTYyMzkwMjJ9"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY = (
    "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDkRk7Bo2hKqpW3f1x9yZ2Lk8Vt4Rb7Np3Wc6Hy1Jd5Gf0KsAeQ2mLk8Vt4\n"
    "-----END " + "OPENSSH PRIVATE KEY-----"
)
RANDOM_KEY = "Xq7" + B62 + "Lm2Np9Rs4"

CASES = [
    ("aws_access_key_id", f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}", AWS_KEY_ID),
    ("aws_secret_access_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    (
        "github_token",
        f"git clone https://x-access-token@github.com/acme/shop # {GITHUB_PAT_CLASSIC}",
        GITHUB_PAT_CLASSIC,
    ),
    ("github_token", f"oauth token {GITHUB_OAUTH} expires in 8h", GITHUB_OAUTH),
    ("github_token", f"GH_TOKEN {GITHUB_FINE_GRAINED}", GITHUB_FINE_GRAINED),
    ("gitlab_token", f"curl --header 'PRIVATE-HEADER: {GITLAB}' gitlab.example.com", GITLAB),
    ("slack_token", f"client = WebClient({SLACK_BOT!r})", SLACK_BOT),
    ("slack_webhook", f"requests.post('{SLACK_WEBHOOK}', json=msg)", SLACK_WEBHOOK),
    ("stripe_key", f"stripe.api_key = '{STRIPE}'", STRIPE),
    ("openai_key", f"OPENAI_API_KEY={OPENAI}", OPENAI),
    ("openai_key", f"client = OpenAI(api_key='{OPENAI_LEGACY}')", OPENAI_LEGACY),
    ("anthropic_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("google_api_key", f"maps.googleapis.com/maps/api/js?key={GOOGLE}", GOOGLE),
    ("npm_token", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    ("jwt", f"Cookie: session={JWT}; Path=/", JWT),
    ("private_key", f"cat ~/.ssh/id_ed25519\n{PRIVATE_KEY}\n", PRIVATE_KEY),
    ("url_password", "DATABASE_URL=postgres://app:Pg-s3cret-2024@db.internal:5432/shop", "Pg-s3cret-2024"),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer 4f9a7c1e2b8d6a3f0e5c9b7a1d3e5f7a9c1b'",
        "4f9a7c1e2b8d6a3f0e5c9b7a1d3e5f7a9c1b",
    ),
    ("secret_assignment", "DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("secret_assignment", 'config = {"client_secret": "k9-Vh3-fP2x-Qz7m"}', "k9-Vh3-fP2x-Qz7m"),
    ("secret_assignment", "smtp:\n  password: hunter2-prod\n", "hunter2-prod"),
    ("secret_assignment", "export SECRET_KEY='correct horse battery staple'", "correct horse battery staple"),
    ("secret_assignment", "API_KEY=ak_93jd82hd72", "ak_93jd82hd72"),
    ("high_entropy", f"the signing value is {RANDOM_KEY} keep it safe", RANDOM_KEY),
]


@pytest.mark.parametrize(("kind", "text", "secret"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_kind_of_secret_is_replaced_by_a_labelled_placeholder(kind: str, text: str, secret: str):
    result = redact(text)

    assert secret not in result.text
    assert f"[REDACTED:{kind}]" in result.text
    assert result.counts.get(kind, 0) >= 1


def test_the_text_around_a_secret_is_kept():
    result = redact(f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}  # rotated monthly")

    assert result.text == "export AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]  # rotated monthly"


def test_counts_name_kinds_and_numbers_never_the_secret():
    text = "\n".join(text for _, text, _ in CASES)

    result = redact(text)

    assert result.total >= len({kind for kind, _, _ in CASES})
    rendered = json.dumps(result.counts)
    assert all(secret not in rendered for _, _, secret in CASES)
    assert all(isinstance(n, int) for n in result.counts.values())


ORDINARY = [
    "def get_user(user_id: int) -> User:\n    return db.query(User).filter_by(id=user_id).one()",
    "token = get_token()\npassword: str\napi_key=settings.API_KEY\nsecret = os.environ['APP_SECRET']",
    "def login(username, password=password, token=None):",
    "const token = await auth.getToken({ scopes });",
    "/home/dev/src/shop/layers/core/cairn/transcripts/claude_code.py:42",
    "/usr/local/lib/python3.11/site-packages/requests/adapters.py",
    "git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "session 123e4567-e89b-12d3-a456-426614174000 resumed",
    "image: node@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    '"integrity": "sha512-dB9lVXQm7mHPGbFj8i2Lk2HLtbHs0wqvBbPqVdxW0fPoFOCN7j9OdXC4e7JFZyGgyS9MvuR"',
    "export function useVeryLongDescriptiveHookNameForTodoFiltering() {}",
    "pnpm add @typescript-eslint/eslint-plugin-something-quite-long-name",
    "toolu_019okXfjnUzJkV2VZbndx6ik msg_0175yHhPUPFGbabUiDkdjvaD call_zC8Bb98Ju4Ft4evnpeMpIu85",
    "git clone git@github.com:acme/shop.git && open https://github.com/acme/shop/pull/12",
    "ssh://git@gitlab.example.com:2222/acme/shop.git",
    "password: ${DB_PASSWORD}\ntoken: {{ vault_token }}\nsecret: <your-secret-here>",
    "The user asked to reset the password flow and to rotate tokens weekly.",
    "npx create-next-app@latest todo-app --typescript --tailwind --eslint --app",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_code_paths_ids_and_hashes_survive(text: str):
    result = redact(text)

    assert result.text == text, result.counts
    assert result.counts == {}


def test_entropy_separates_random_keys_from_words():
    assert shannon_entropy(RANDOM_KEY) > 4.5
    assert shannon_entropy("useVeryLongDescriptiveHookNameForTodoFiltering") < shannon_entropy(RANDOM_KEY)
    assert shannon_entropy("") == 0.0


def claude_line(content: str, **extra) -> dict:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "type": "user",
        "uuid": "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        "timestamp": "2025-10-01T10:00:00Z",
        "message": {"role": "user", "content": [{"type": "text", "text": content}]},
        **extra,
    }


def test_jsonl_redaction_redacts_inside_string_values_and_keeps_every_line_valid_json():
    lines = [
        claude_line("no secrets here"),
        claude_line(f'use this key: "{OPENAI}" and\nthe "quoted" part'),
        claude_line("x", toolUseResult={"stdout": f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}\n", "exit": 0}),
    ]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)

    redacted, counts = redact_bytes_jsonl(data)

    out = redacted.split(b"\n")
    assert out[0] == json.dumps(lines[0]).encode()  # untouched lines stay byte for byte
    assert out[-1] == b""  # the trailing newline is kept
    parsed = [json.loads(line) for line in out if line]
    assert (
        parsed[1]["message"]["content"][0]["text"]
        == 'use this key: "[REDACTED:openai_key]" and\nthe "quoted" part'
    )
    assert parsed[2]["toolUseResult"]["stdout"] == "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]\n"
    assert parsed[1]["uuid"] == lines[1]["uuid"] and parsed[1]["sessionId"] == lines[1]["sessionId"]
    assert counts == {"openai_key": 1, "aws_access_key_id": 1}
    assert OPENAI.encode() not in redacted and AWS_KEY_ID.encode() not in redacted


def test_jsonl_redaction_leaves_structural_ids_and_opaque_blobs_alone():
    line = claude_line("hi", signature=RANDOM_KEY * 2, requestId="req_" + RANDOM_KEY)
    data = json.dumps(line).encode() + b"\n"

    assert redact_bytes_jsonl(data) == (data, {})


def test_jsonl_redaction_redacts_a_broken_line_as_plain_text():
    data = b'{"type": "user", "message": "truncated ' + GITLAB.encode() + b"\n"

    redacted, counts = redact_bytes_jsonl(data)

    assert redacted == b'{"type": "user", "message": "truncated [REDACTED:gitlab_token]\n'
    assert counts == {"gitlab_token": 1}


def test_a_redacted_transcript_still_parses_and_shows_the_placeholder():
    lines = [
        claude_line(f"deploy with STRIPE_KEY={STRIPE} please"),
        claude_line(
            "and the webhook " + SLACK_WEBHOOK,
            uuid="bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee",
            parentUuid="aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        ),
    ]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)

    parsed = parse_transcript(redact_bytes_jsonl(data)[0])

    assert [e.text for e in parsed.events] == [
        "deploy with STRIPE_KEY=[REDACTED:stripe_key] please",
        "and the webhook [REDACTED:slack_webhook]",
    ]


#: Real transcripts in a format Cairn parses (Copilot CLI's events.jsonl is not one: parse_transcript
#: refuses it).
FIXTURE_FILES = sorted([*TRANSCRIPTS.glob("claude-code/*/*.jsonl"), *TRANSCRIPTS.glob("codex/*/*.jsonl")])
#: Real transcripts on which the redactor finds "secrets" that are not secrets (false positives, a known bug):
#: strict, so the test says so as soon as the redactor stops flagging them.
# (counts, Go pointers and package versions are no longer flagged: see the assignment tests above)
FALSE_POSITIVES = {
    "session-8ecab05f.jsonl": "a pasted screenshot's base64 data (high_entropy)",
    "rollout-019efc87.jsonl": "the masked token `gh auth status` prints, a plugin path with a hash in it",
}


def _fixture_param(path: Path):
    reason = FALSE_POSITIVES.get(path.name)
    marks = [pytest.mark.xfail(strict=True, reason=f"redactor false positive: {reason}")] if reason else []
    return pytest.param(path, marks=marks, id=path.name[:40])


@pytest.mark.integration
@pytest.mark.parametrize("path", [_fixture_param(path) for path in FIXTURE_FILES])
def test_redacting_a_real_transcript_keeps_every_line_valid_json_and_the_parse_unchanged(path: Path):
    data = path.read_bytes()
    # plant a secret inside a real line's nested content, then redact the whole file
    first, rest = data.split(b"\n", 1)
    planted = json.loads(first)
    planted["plantedNote"] = {"text": f"export GITHUB_TOKEN={GITHUB_PAT_CLASSIC}"}
    data_with_secret = json.dumps(planted).encode() + b"\n" + rest

    redacted, counts = redact_bytes_jsonl(data_with_secret)

    assert counts == {"github_token": 1}  # the fixtures hold no secrets of their own (see SOURCE.md)
    assert GITHUB_PAT_CLASSIC.encode() not in redacted
    lines = [line for line in redacted.split(b"\n") if line.strip()]
    assert len(lines) == len([line for line in data.split(b"\n") if line.strip()])
    for line in lines:
        json.loads(line)
    assert (
        parse_transcript(redacted, filename=path.name).events
        == parse_transcript(data, filename=path.name).events
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"cmd":"bun test","max_output_tokens":12000}',
        '"total_token_usage":{"input_tokens":61234567}',
        "TokenUsage: &agent.TokenUsage{Input: 1}",
        '"js-tokens": "^4.0.0"',
    ],
)
def test_counts_pointers_and_package_versions_named_like_tokens_are_not_secrets(text):
    assert redact(text).text == text


# a credential only its context marks as one: no token format of its own
DB_TOKEN = "pg" + "7Kx2Qm9T"


def test_a_secret_found_by_its_context_is_redacted_where_the_text_repeats_it():
    said = f"Set DB_TOKEN={DB_TOKEN} in .env, then run psql with {DB_TOKEN}; {DB_TOKEN}x is another word."

    result = redact(said)

    assert result.text == (
        "Set DB_TOKEN=[REDACTED:secret_assignment] in .env, then run psql with [REDACTED:secret_assignment]; "
        f"{DB_TOKEN}x is another word."
    )
    assert result.counts == {"secret_assignment": 2}


def test_a_short_word_assigned_as_a_password_is_not_redacted_everywhere_else():
    assert redact("password: admin, and the admin page").text == "password: admin, and the admin page"


def test_a_transcript_s_repeats_of_a_secret_another_line_gave_are_redacted_too():
    lines = [
        claude_line("x", toolUseResult={"stdout": f"DB_TOKEN={DB_TOKEN}\n", "exit": 0}),
        claude_line(f"The .env file sets the token to {DB_TOKEN}.", requestId=DB_TOKEN),
        claude_line("nothing to see"),
    ]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)

    redacted, counts = redact_bytes_jsonl(data)

    out = redacted.split(b"\n")
    parsed = [json.loads(line) for line in out if line]
    told = parsed[1]["message"]["content"][0]["text"]
    assert told == "The .env file sets the token to [REDACTED:secret_assignment]."
    assert parsed[1]["requestId"] == DB_TOKEN  # a structural id is the format's, left alone
    assert out[2] == json.dumps(lines[2]).encode()  # a line without it stays byte for byte
    assert counts == {"secret_assignment": 2}


def test_a_part_of_a_secret_that_reads_as_a_credential_is_redacted_where_it_is_repeated():
    token = "purge-" + "qx77a" + "-a81f"
    said = f"X-Purge-Token: {token}\nThe note asks to purge with the purge-qx77a token; purge it is not."

    result = redact(said)

    assert "qx77a" not in result.text
    assert result.text.endswith("with the purge-[REDACTED:secret_assignment] token; purge it is not.")


def test_a_secret_in_a_two_column_table_row_is_redacted_as_vault_prints_it():
    table = (
        "Key                 Value\n"
        "---                 -----\n"
        "lease_duration      768h\n"
        "db_user             billing_app\n"
        "db_password         Vr4!kT9w-prod-2291\n"
        "api_token           hvs7Qm7Lp2Xz9Rw4\n"
    )
    out = redact(table).text
    assert "Vr4!kT9w-prod-2291" not in out and "hvs7Qm7Lp2Xz9Rw4" not in out
    assert "billing_app" in out and "768h" in out
    # prose, a placeholder and a reference to where the secret lives are no row of a secret
    kept = ("password reset  flow is broken", "api_key         ${API_KEY}", "db_password     <redacted>")
    assert [redact(line).text for line in kept] == list(kept)

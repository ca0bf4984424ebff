"""Synthetic but realistic coding-session records for `scale.py`: memories and transcript excerpts.

Every record is a few *fragments* (one-sentence statements about a project: a command and its exit status,
a file touched, an error and its fix, a decision, a convention) drawn from a fixed pool, so the pool is
embedded once with the real model and each record's vector is the normalised mean of its fragments'
vectors. That keeps building a 100k or 1M store a matter of minutes, while both legs see what they see in
a real store: identifiers, paths, commands and English, Zipf-distributed, short memories and long
excerpts (up to ~1,800 characters, as the pipeline writes them). Deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

PROJECTS = [
    f"github.com/acme/{name}"
    for name in (
        "payments",
        "web",
        "infra",
        "auth",
        "search",
        "mobile",
        "billing",
        "ingest",
        "docs",
        "ml",
        "gateway",
        "cli",
    )
]
_MODULES = [
    "api",
    "db",
    "cache",
    "queue",
    "worker",
    "auth",
    "billing",
    "search",
    "ui",
    "config",
    "events",
    "metrics",
    "storage",
    "scheduler",
    "router",
    "session",
    "webhooks",
    "export",
]
_WORDS = [
    "retry",
    "timeout",
    "migration",
    "index",
    "schema",
    "token",
    "payload",
    "handler",
    "client",
    "fixture",
    "snapshot",
    "lockfile",
    "cursor",
    "pagination",
    "batch",
    "stream",
    "backoff",
    "deadline",
    "quota",
    "tenant",
    "invoice",
    "refund",
    "ledger",
    "webhook",
    "signature",
    "replica",
    "shard",
    "connection",
    "pool",
    "transaction",
    "rollback",
    "deadlock",
    "latency",
    "throughput",
    "serializer",
    "validator",
    "middleware",
    "endpoint",
    "cron",
    "env",
    "secret",
    "bucket",
    "presigned",
    "upload",
    "thumbnail",
    "locale",
    "timezone",
    "feature flag",
    "rate limit",
]
_ERRORS = [
    "ConnectionRefusedError",
    "TimeoutError",
    "KeyError: 'tenant_id'",
    "IntegrityError: duplicate key",
    "ModuleNotFoundError: No module named 'yaml'",
    "AssertionError",
    "PermissionError: [Errno 13]",
    "TypeError: 'NoneType' object is not subscriptable",
    "OperationalError: database is locked",
    "ValidationError: 1 validation error",
    "SSLError: certificate verify failed",
    "RecursionError: maximum recursion depth exceeded",
    "ImportError: circular import",
    "HTTP 429 Too Many Requests",
    "HTTP 502 Bad Gateway",
    "segmentation fault (core dumped)",
]
_TOOLS = [
    "pytest -q tests/{m}",
    "npm run test -- {m}",
    "make {m}",
    "docker compose up {m}",
    "alembic upgrade head",
    "ruff check src/{m}",
    "mypy src/{m}",
    "cargo test -p {m}",
    "go test ./{m}/...",
    "terraform plan -target=module.{m}",
    "kubectl rollout restart deploy/{m}",
    "psql -c 'select count(*) from {m}'",
    "git bisect run pytest tests/{m}",
    "uv pip install -e .",
]
_FILES = [
    "src/{m}/{w}.py",
    "src/{m}/__init__.py",
    "tests/{m}/test_{w}.py",
    "{m}/{w}.ts",
    "config/{m}.yaml",
    "migrations/0{n}_{w}.sql",
    "infra/{m}.tf",
    "docs/{m}.md",
    "scripts/{w}.sh",
    "{m}/{w}_test.go",
]
_TEMPLATES = [
    "Ran `{tool}`: exit {code}, {n} passed, {k} failed in {file}.",
    "The {w} in {file} fails with {err} when the {w2} is empty.",
    "Fixed {err} in {file} by adding a {w} around the {w2} call.",
    "Decision: use {w} instead of {w2} for the {m} service because {w3} was too slow.",
    "Convention: every {m} {w} goes through {file}; never call the {w2} directly.",
    "Prefer {w} over {w2} in {m}; the team agreed after the {w3} incident.",
    "To release {m}: `{tool}`, then bump the {w} and tag; takes about {n} minutes.",
    "The {m} tests need the {w} stub on port {port} and CAMEL_{W}_URL set.",
    "Edited {file} and {file2}: the {w} now retries with {w2} backoff up to {n} times.",
    "User asked to rename {w} to {w2} across {m} and keep the old name as an alias.",
    "{err} came from {file2}; root cause was a stale {w} after the {w2} migration.",
    "Benchmark of {m}: p95 {n}{k} ms for the {w} path, {w2} dominates.",
    "Read {file}: the {w} is built once per process and shared by the {w2} handlers.",
    "Open question: should {m} keep the {w} in {w2} or move it to the {w3} table?",
    "The {w} flag defaults to off in {m}; turning it on needs the {w2} migration first.",
]


@dataclass(frozen=True, slots=True)
class Record:
    kind: str
    project: str | None  # None: a team-scoped memory
    scope: str
    owner: str | None
    title: str | None
    fragments: tuple[int, ...]
    session: int


def fragment_pool(size: int, seed: int = 13) -> list[str]:
    """`size` distinct one-sentence statements; words and modules are Zipf-weighted like real sessions."""
    rng = random.Random(seed)
    zipf_words = [1.0 / (i + 1) ** 0.8 for i in range(len(_WORDS))]
    zipf_modules = [1.0 / (i + 1) ** 0.7 for i in range(len(_MODULES))]
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < size:
        m = rng.choices(_MODULES, zipf_modules)[0]
        w, w2, w3 = rng.choices(_WORDS, zipf_words, k=3)

        def path(template: str, m: str = m) -> str:
            return template.format(m=m, w=rng.choice(_WORDS).replace(" ", "_"), n=rng.randint(1, 9))

        text = rng.choice(_TEMPLATES).format(
            tool=rng.choice(_TOOLS).format(m=m),
            code=rng.choice([0, 0, 0, 1, 2, 137]),
            n=rng.randint(2, 400),
            k=rng.randint(0, 9),
            file=path(rng.choice(_FILES)),
            file2=path(rng.choice(_FILES), rng.choice(_MODULES)),
            err=rng.choice(_ERRORS),
            w=w,
            w2=w2,
            w3=w3,
            W=w.upper().replace(" ", "_"),
            m=m,
            port=rng.randint(3000, 9999),
        )
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


_MEMORY_KINDS = ["fact", "decision", "procedure", "preference", "pattern", "episode"]


def records(n: int, pool_size: int, seed: int = 29) -> list[Record]:
    """`n` records of one team: ~60 % transcript excerpts (4-12 fragments), the rest memories (1-3)."""
    rng = random.Random(seed)
    project_weights = [1.0 / (i + 1) ** 0.9 for i in range(len(PROJECTS))]
    out: list[Record] = []
    for i in range(n):
        session = i // 40  # ~40 records per session, as a real session leaves
        excerpt = rng.random() < 0.6
        scope_roll = rng.random()
        scope = "project" if excerpt or scope_roll < 0.9 else ("team" if scope_roll < 0.95 else "personal")
        project = None if scope == "team" else rng.choices(PROJECTS, project_weights)[0]
        count = rng.randint(4, 12) if excerpt else rng.randint(1, 3)
        fragments = tuple(rng.randrange(pool_size) for _ in range(count))
        out.append(
            Record(
                kind="excerpt" if excerpt else rng.choice(_MEMORY_KINDS),
                project=project,
                scope=scope,
                owner="alice" if scope == "personal" else None,
                title=None if excerpt else f"{rng.choice(_MODULES)} {rng.choice(_WORDS)}",
                fragments=fragments,
                session=session,
            )
        )
    return out


def text_of(record: Record, pool: list[str]) -> str:
    lines = [pool[f] for f in record.fragments]
    if record.kind == "excerpt":
        return ("request: " + lines[0] + "\n" + "\n".join(f"$ {x}" for x in lines[1:]))[:1800]
    return " ".join(lines)


def vector_of(record: Record, pool_vectors: np.ndarray) -> np.ndarray:
    v = pool_vectors[list(record.fragments)].mean(axis=0)
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)


def query_for(record: Record, pool: list[str], rng: random.Random) -> str:
    """A question a user might ask that one of the record's fragments answers, in other words."""
    words = [w.strip("`.,:;'") for w in pool[rng.choice(record.fragments)].split()]
    words = [w for w in words if len(w) > 3]
    picked = rng.sample(words, min(len(words), rng.randint(3, 5)))
    lead = rng.choice(["how do we", "why does", "what about", "where is", "what did we decide on", ""])
    return f"{lead} {' '.join(picked)}?".strip()

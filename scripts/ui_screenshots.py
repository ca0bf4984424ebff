"""Screenshots of the web UI's main pages into docs/screenshots/, from a seeded throwaway Cairn.

Starts the real app (embedded mode, temp CAIRN_HOME) with uvicorn on a free 127.0.0.1 port, seeds one
team with memories, sessions (one failed) and a pending handoff, signs in with Debian's Chromium
(/usr/bin/chromium) through Playwright, and saves: overview, memories, memory, sessions, session,
context, keys (laptop width) and memories-phone (390 px). No request leaves 127.0.0.1.

    .venv/bin/python scripts/ui_screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.domain.models import KeyScope, MemoryKind, Provenance, Scope, Session
from cairn.services.feedback import FeedbackService, Signal
from cairn.services.handoffs import HandoffNote, HandoffService
from cairn.services.memories import NewMemory
from cairn.settings import Settings
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' own loopback server helper
from tests.live import CHROMIUM_ARGS, free_port, serving  # noqa: E402

SHOP = "github.com/acme/shop"
BILLING = "github.com/acme/billing"


def seed(container) -> tuple[str, str, str]:
    team, _, secret = container.keys.create_team("acme", "alice")
    alice = container.keys.authenticate(secret)
    container.keys.create_key(alice, "bob", "laptop", frozenset({KeyScope.READ, KeyScope.WRITE}))
    container.keys.create_key(alice, "ci", "nightly", frozenset({KeyScope.READ}), timedelta(days=90))
    now = datetime.now(UTC)
    sessions = [
        ("3f1c9a7e-5b2d-4c1a-9e0f-7d6b2a1c8e41", SHOP, "claude-code", "learned", None),
        ("b7d2e4f1-0a9c-4b3e-8d5f-2c1e6a7b9d03", BILLING, "codex", "learned", None),
        ("9e8d7c6b-5a4f-4e3d-2c1b-0a9f8e7d6c5b", SHOP, "gemini-cli", "failed", "chunk"),
        ("c4b3a291-8f7e-4d6c-5b4a-3f2e1d0c9b8a", SHOP, "claude-code", "processing", None),
    ]
    for i, (sid, project, agent, status, failed) in enumerate(sessions):
        stats: dict = {}
        if status != "processing":
            stats = {"parse": {"parts": 2, "events": 184 - 30 * i}}
        if status == "learned":
            stats |= {
                "chunk": {"chunks": 4},
                "extract": {"candidates": 17, "extractors": ["rules"], "queued_for_llm": 0},
                "consolidate": {
                    "created": 6 - i,
                    "merged": 3,
                    "superseded": 1,
                    "relations": 4,
                    "promoted": i,
                },
                "reflect": {"reflection_id": None, "handoff_id": None, "procedures": 1},
            }
        if failed:
            stats["error"] = {
                "stage": failed,
                "code": "invalid_input",
                "message": "the transcript part is not JSON lines (line 1: unexpected character)",
            }
        container.sessions.put(
            Session(
                id=sid,
                team_id=team.id,
                project=project,
                agent=agent,
                member="alice",
                started_at=now - timedelta(hours=3 * i + 2),
                ended_at=None if status == "processing" else now - timedelta(hours=3 * i + 1),
                transcript_keys=(f"transcripts/{team.id}/{sid}/part-1.jsonl.gz",),
                status=status,
                stats=stats,
                updated_at=now - timedelta(hours=3 * i),
            )
        )
    learned = sessions[0][0]

    def remember(content: str, kind=MemoryKind.FACT, project=SHOP, **kw):
        return container.memories.remember(
            alice, NewMemory(kind=kind, content=content, project=project, **kw)
        )

    stub = remember(
        "Integration tests need the payments stub running on port 9100 (make stub); without it the checkout "
        "suite hangs for 60 s per test and then fails with ECONNREFUSED.",
        title="Payments stub port for integration tests",
        tags=("testing", "payments"),
        provenance=Provenance(session_id=learned, line_start=112, line_end=131, agent="claude-code"),
        confidence=0.8,
    )
    old = remember(
        "Use PostgreSQL 14 for local development.",
        kind=MemoryKind.DECISION,
        title="Local database",
        provenance=Provenance(session_id=learned, line_start=40, line_end=44, agent="claude-code"),
    )
    container.memories.supersede(
        alice,
        old.id,
        NewMemory(
            kind=MemoryKind.DECISION,
            content="Use PostgreSQL 16 for local development: the JSONB path queries in orders need it.",
            project=SHOP,
            title="Local database",
            details={"rationale": "JSONB path queries", "alternatives": ["SQLite", "PostgreSQL 14"]},
        ),
    )
    remember(
        "Run `ruff format` and `ruff check` with line length 110 before committing.",
        kind=MemoryKind.PREFERENCE,
        title="Formatting before commits",
        tags=("style",),
        pinned=True,
    )
    proc = remember(
        "Release: bump the version, `make changelog`, tag vX.Y.Z, push the tag; CI publishes the wheel.",
        kind=MemoryKind.PROCEDURE,
        title="Cutting a release",
        details={"steps": ["bump version", "make changelog", "tag", "push tag"], "success_count": 7},
    )
    remember(
        "Never commit .env files; the pre-commit hook scans staged files for secrets.",
        kind=MemoryKind.PATTERN,
        scope=Scope.TEAM,
        project=None,
        title="No secrets in commits",
    )
    remember(
        "Invoices are generated nightly at 02:00 UTC by the billing cron job (billing/cron.py).",
        project=BILLING,
        title="Invoice generation schedule",
        provenance=Provenance(session_id=sessions[1][0], line_start=9, line_end=15, agent="codex"),
    )
    remember(
        "Stripe webhooks are verified with the signing secret from the vault, never the API key.",
        kind=MemoryKind.DECISION,
        project=BILLING,
        title="Webhook verification",
    )
    remember(
        "Flaky test test_refund_race: fixed by awaiting the ledger write before asserting.",
        kind=MemoryKind.EPISODE,
        tags=("error", "resolved"),
        details={"outcome": "success"},
    )
    container.memories.relate(alice, proc.id, "relates-to", stub.id)
    feedback = FeedbackService(container.memories)
    for _ in range(3):
        feedback.give(alice, stub.id, Signal.USEFUL)
    container.memories.get(alice, stub.id)
    container.context.assemble(alice, SHOP, "codex")  # some use counts
    HandoffService(container.memories).save_handoff(
        alice,
        HandoffNote(
            project=SHOP,
            summary="Half-way through the checkout refactor: price caching is in, invalidation is not.",
            agent="claude-code",
            next_steps=("invalidate the price cache on catalogue updates", "add the cache-hit metric"),
            open_questions=("should the cache be per region?",),
        ),
    )
    return secret, stub.id, sessions[2][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory() as tmp:
        container = build_container(Settings(mode="local", home=Path(tmp) / "home"))
        secret, memory_id, failed_session = seed(container)
        port = free_port()
        container.settings.port = port
        outside: list[str] = []
        try:
            with serving(create_app(container), port) as url, sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
                shots = [
                    ("overview", "/ui/", {}),
                    ("memories", "/ui/memories", {}),
                    ("memory", f"/ui/memories/{memory_id}", {}),
                    ("sessions", "/ui/sessions", {}),
                    ("session-failed", f"/ui/sessions/{failed_session}", {}),
                    ("context", f"/ui/context?project={SHOP}&agent=claude-code", {}),
                    ("keys", "/ui/keys", {}),
                    ("memories-phone", "/ui/memories", {"viewport": {"width": 390, "height": 844}}),
                    (
                        "memory-phone",
                        f"/ui/memories/{memory_id}",
                        {"viewport": {"width": 390, "height": 844}},
                    ),
                ]
                for name, path, options in shots:
                    context = browser.new_context(
                        viewport=options.get("viewport", {"width": 1280, "height": 860}),
                        device_scale_factor=1,
                        color_scheme="light",
                    )

                    def gate(route):
                        if urlsplit(route.request.url).hostname not in ("127.0.0.1", None):
                            outside.append(route.request.url)
                            return route.abort()
                        return route.continue_()

                    context.route("**/*", gate)
                    page = context.new_page()
                    page.goto(url + "/ui/login")
                    page.get_by_label("API key").fill(secret)
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url(url + "/ui/")
                    page.goto(url + path)
                    page.screenshot(path=str(args.out / f"{name}.png"), full_page=True)
                    print(f"wrote {args.out / (name + '.png')}")
                    context.close()
                browser.close()
        finally:
            container.close()
        if outside:
            raise SystemExit(f"requests tried to leave 127.0.0.1: {outside}")


if __name__ == "__main__":
    main()

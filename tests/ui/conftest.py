"""The web UI in a real headless browser: Debian's /usr/bin/chromium driven by Playwright's Python package.

One embedded Cairn (SQLite in a temp CAIRN_HOME, the real app under uvicorn on a free 127.0.0.1 port) is
seeded once per run: team A with an admin and a read-only key, memories, a learned session (uploaded and
learned through the real pipeline), a failed one and a pending handoff; team B with its own admin key.
Every test gets a fresh browser context (no cookies); every request the browser makes is recorded and
any that would leave 127.0.0.1 is aborted and fails the test.

No `playwright install`: the browser is the distribution's Chromium. Without it the tier is skipped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.domain.models import MemoryKind, Provenance, Scope, Session
from cairn.services.memories import NewMemory
from cairn.settings import Settings
from fastapi.testclient import TestClient

from tests.integration.pipeline_helpers import claude_transcript, learn
from tests.live import CHROMIUM_ARGS, free_port, serving

CHROMIUM = Path(os.environ.get("CAIRN_UI_CHROMIUM", "/usr/bin/chromium"))
PROJECT = "github.com/acme/shop"
OTHER_PROJECT = "github.com/acme/billing"
B_PROJECT = "github.com/beta/secret-plans"
LEARNED_SESSION = "ui-learned-session"
FAILED_SESSION = "ui-failed-session"


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    missing = None
    if not CHROMIUM.exists():
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright Python package is not installed (pip install -e '.[dev]')"
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.ui)
            if missing:
                item.add_marker(pytest.mark.skip(reason=missing))


@dataclass
class Stack:
    url: str
    container: object
    admin_a: str
    reader_a: str
    admin_b: str
    team_a: str
    team_b: str
    memory_ids: dict[str, str] = field(default_factory=dict)

    def principal(self, secret: str):
        return self.container.keys.authenticate(secret)

    def remember(self, content: str, **kwargs) -> str:
        kwargs.setdefault("kind", MemoryKind.FACT)
        kwargs.setdefault("project", PROJECT)
        return self.container.memories.remember(
            self.principal(self.admin_a), NewMemory(content=content, **kwargs)
        ).id


def _seed(container, api) -> Stack:
    team_a, _, admin_a = container.keys.create_team("alpha", "alice")
    team_b, _, admin_b = container.keys.create_team("beta", "bob")
    alice = container.keys.authenticate(admin_a)
    from cairn.domain.models import KeyScope

    _, reader_a = container.keys.create_key(alice, "rita", "read-only", frozenset({KeyScope.READ}))
    stack = Stack("", container, admin_a, reader_a, admin_b, team_a.id, team_b.id)
    ids = stack.memory_ids
    ids["stub"] = stack.remember(
        "Integration tests need the payments stub on port 9100", title="Payments stub port", tags=("testing",)
    )
    ids["pref"] = stack.remember(
        "Use ruff format with line length 110 before committing", kind=MemoryKind.PREFERENCE, tags=("style",)
    )
    ids["team"] = stack.remember(
        "Never commit secrets; the pre-commit hook scans for them", kind=MemoryKind.PATTERN, scope=Scope.TEAM
    )
    ids["billing"] = stack.remember(
        "Invoices are generated nightly by the billing cron", project=OTHER_PROJECT, kind=MemoryKind.FACT
    )
    ids["learned_by_hand"] = stack.remember(
        "The checkout page caches prices for five minutes",
        provenance=Provenance(session_id=LEARNED_SESSION, line_start=3, line_end=4, agent="claude-code"),
    )
    raw = claude_transcript(
        LEARNED_SESSION,
        [
            ("user", "Let's go with PostgreSQL for the database because we need JSONB."),
            ("assistant", [{"type": "text", "text": "Noted."}]),
        ],
    )
    headers = {"Authorization": f"Bearer {admin_a}"}
    session = learn(container, api, headers, raw=raw, session_id=LEARNED_SESSION, project=PROJECT)
    assert session["status"] == "learned", session
    container.sessions.put(
        Session(
            id=FAILED_SESSION,
            team_id=team_a.id,
            project=PROJECT,
            agent="codex",
            member="alice",
            status="failed",
            stats={
                "parse": {"parts": 1, "events": 0},
                "error": {
                    "stage": "chunk",
                    "code": "invalid_input",
                    "message": "the transcript has no turns",
                },
            },
        )
    )
    bob = container.keys.authenticate(admin_b)
    container.memories.remember(
        bob,
        NewMemory(kind=MemoryKind.DECISION, content="Beta launches the moon base in May", project=B_PROJECT),
    )
    return stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    home = tmp_path_factory.mktemp("cairn-ui-home")
    container = build_container(Settings(mode="local", home=home))
    port = free_port()
    container.settings.port = port
    app = create_app(container)
    with TestClient(app) as api:
        seeded = _seed(container, api)
    with serving(app, port) as url:
        seeded.url = url
        yield seeded
    container.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Traffic:
    urls: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    @property
    def hosts(self) -> set[str]:
        return {urlsplit(u).hostname or "" for u in self.urls if not u.startswith(("data:", "about:"))}


def _new_page(browser, traffic: Traffic, **options):
    context = browser.new_context(**options)

    def gate(route):
        url = route.request.url
        traffic.urls.append(url)
        if url.startswith(("data:", "about:")) or urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            traffic.blocked.append(url)
            route.abort()

    context.route("**/*", gate)
    page = context.new_page()
    page.on("console", lambda m: traffic.console_errors.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: d.accept())  # the confirm() before forget and revoke
    return context, page


@pytest.fixture
def traffic():
    return Traffic()


@pytest.fixture
def open_page(browser, traffic):
    """A factory of fresh pages (own cookie jar); after the test, no request may have left 127.0.0.1."""
    contexts = []

    def make(**options):
        context, page = _new_page(browser, traffic, **options)
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()
    assert not traffic.blocked, f"requests tried to leave 127.0.0.1: {traffic.blocked}"
    assert traffic.hosts <= {"127.0.0.1"}, traffic.hosts


def sign_in(page, stack: Stack, secret: str) -> None:
    page.goto(stack.url + "/")
    page.get_by_label("API key").fill(secret)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/ui/(\?.*)?$"))


@pytest.fixture
def admin_page(open_page, stack):
    page = open_page()
    sign_in(page, stack, stack.admin_a)
    return page

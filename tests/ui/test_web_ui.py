"""The web UI driven like a person would: sign in, browse, search, change memories, sessions, context, keys.

Each test signs in afresh in its own browser context; the checks read what is on the page (roles, labels,
text), and, where a change is made, what the services now hold.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from cairn.domain.errors import NotFound
from cairn.domain.models import MemoryKind, Provenance, Scope, Session
from cairn.services.handoffs import HandoffNote, HandoffService
from cairn.services.memories import MemoryPatch, NewMemory

from tests.ui.conftest import (
    B_PROJECT,
    FAILED_SESSION,
    LEARNED_SESSION,
    OTHER_PROJECT,
    PROJECT,
    sign_in,
)


def _csrf(page) -> str:
    return page.locator("input[name=csrf]").first.input_value()


# --- sign-in -------------------------------------------------------------------------------------------
def test_signing_in_exchanges_the_key_for_an_httponly_strict_cookie_that_does_not_hold_it(open_page, stack):
    page = open_page()
    page.goto(stack.url + "/")
    assert page.url.endswith("/ui/login")
    page.get_by_label("API key").fill(stack.admin_a)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/ui/$"))
    assert page.get_by_role("heading", name="Overview").is_visible()
    [cookie] = [c for c in page.context.cookies() if c["name"] == "cairn_ui"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert stack.admin_a not in cookie["value"]
    assert stack.admin_a not in page.url
    assert page.evaluate("document.cookie") == ""  # nothing a script can read
    assert page.evaluate("Object.keys(localStorage).length + Object.keys(sessionStorage).length") == 0


def test_a_wrong_key_is_refused_and_the_pages_stay_closed(open_page, stack):
    page = open_page()
    page.goto(stack.url + "/ui/login")
    page.get_by_label("API key").fill("cairn_not-a-real-key")
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_role("alert").inner_text() == "invalid API key"
    page.goto(stack.url + "/ui/memories")
    assert page.url.endswith("/ui/login")


def test_signing_out_ends_the_session(admin_page, stack):
    admin_page.get_by_role("button", name="Sign out").click()
    admin_page.wait_for_url(re.compile(r"/ui/login$"))
    admin_page.goto(stack.url + "/ui/keys")
    assert admin_page.url.endswith("/ui/login")


# --- browsing ------------------------------------------------------------------------------------------
def test_the_overview_counts_memories_by_project_and_kind_and_shows_what_sessions_learned(admin_page):
    projects = admin_page.get_by_role("table")
    assert projects.get_by_role("link", name=PROJECT).is_visible()
    assert projects.get_by_role("link", name=OTHER_PROJECT).is_visible()
    assert projects.get_by_role("link", name="team-wide").is_visible()
    assert B_PROJECT not in admin_page.content()
    learned = admin_page.locator(".card", has_text=LEARNED_SESSION)
    assert "learned" in learned.inner_text()
    assert re.search(r"Learned: \d+ created", learned.inner_text())
    failed = admin_page.locator(".card", has_text=FAILED_SESSION)
    assert "Failed in chunk: the transcript has no turns" in failed.inner_text()


def test_memories_filter_by_kind_and_tag_and_hybrid_search_finds_by_meaning(admin_page, stack):
    admin_page.get_by_role("link", name="Memories", exact=True).click()
    admin_page.get_by_label("Kind").select_option("preference")
    admin_page.get_by_role("button", name="Apply").click()
    titles = admin_page.locator(".mem-title").all_inner_texts()
    assert titles and all("ruff" in t for t in titles)
    admin_page.goto(stack.url + "/ui/memories?tag=testing")
    assert admin_page.locator(".mem-title").all_inner_texts() == ["Payments stub port"]
    admin_page.get_by_role("link", name="Clear").click()
    admin_page.get_by_label("Search").fill("which port does the payment stub listen on?")
    admin_page.get_by_role("button", name="Apply").click()
    assert admin_page.locator(".mem-title").first.inner_text() == "Payments stub port"
    assert "score" in admin_page.locator(".mem").first.inner_text()


def test_memories_page_through_the_list_with_next_page_links(admin_page, stack):
    for i in range(30):
        stack.remember(
            f"Paging fixture note number {i} about the warehouse API", project="github.com/acme/paging"
        )
    admin_page.goto(stack.url + "/ui/memories?project=github.com/acme/paging&kind=fact")
    first = admin_page.locator(".mem-title").all_inner_texts()
    admin_page.get_by_role("link", name="Next page").click()
    second = admin_page.locator(".mem-title").all_inner_texts()
    assert len(first) == 25 and second and not set(first) & set(second)
    assert admin_page.get_by_role("link", name="First page").is_visible()


def test_a_memory_page_shows_provenance_use_and_links_to_its_transcript_lines(admin_page, stack):
    admin_page.goto(stack.url + f"/ui/memories/{stack.memory_ids['learned_by_hand']}")
    provenance = admin_page.get_by_role("region", name="Provenance")
    assert "3–4" in provenance.inner_text()
    assert "claude-code" in provenance.inner_text()
    assert "Used" in admin_page.get_by_role("region", name="Confidence and use").inner_text()
    provenance.get_by_role("link", name="Show the transcript lines").click()
    assert admin_page.get_by_role("heading", name="Transcript, lines 3–4").is_visible()
    assert f"/ui/sessions/{LEARNED_SESSION}/transcript?line_start=3&line_end=4" in admin_page.url


def test_a_memory_learned_by_the_pipeline_links_back_to_its_session(admin_page, stack):
    admin_page.goto(stack.url + f"/ui/memories?session={LEARNED_SESSION}&kind=decision")
    admin_page.locator(".mem-title", has_text="PostgreSQL").first.click()
    admin_page.get_by_role("region", name="Provenance").get_by_role("link", name=LEARNED_SESSION[:39]).click()
    assert admin_page.get_by_role("heading", name=re.compile("Session")).is_visible()


# --- changes -------------------------------------------------------------------------------------------
def test_editing_a_memory_saves_the_new_content_and_tags(admin_page, stack):
    memory_id = stack.remember("The staging database is reset every Sunday")
    admin_page.goto(stack.url + f"/ui/memories/{memory_id}")
    admin_page.locator("summary", has_text="Edit").click()
    admin_page.get_by_label("Content", exact=True).fill("The staging database is reset every Saturday night")
    admin_page.get_by_label("Tags (comma-separated)").fill("staging, db")
    admin_page.get_by_role("button", name="Save").click()
    assert admin_page.get_by_role("status").inner_text() == "Saved."
    assert "every Saturday night" in admin_page.locator("#content").inner_text()
    stored = stack.container.memories.get(stack.principal(stack.admin_a), memory_id)
    assert stored.content.endswith("Saturday night") and stored.tags == ("staging", "db")


def test_pinning_and_marking_a_memory_useful_changes_it(admin_page, stack):
    memory_id = stack.remember("Feature flags live in config/flags.yaml")
    admin_page.goto(stack.url + f"/ui/memories/{memory_id}")
    admin_page.get_by_role("button", name="Pin").click()
    assert admin_page.get_by_role("status").inner_text() == "Pinned."
    admin_page.get_by_role("button", name="Mark useful").click()
    stored = stack.container.memories.get(stack.principal(stack.admin_a), memory_id)
    assert stored.pinned and stored.confidence > 0.5 and stored.details["feedback"]["useful"] == 1


def test_a_memory_page_lists_its_audit_trail_with_who_did_what_and_in_which_request(admin_page, stack):
    memory_id = stack.remember("Lint runs in the pre-commit hook")
    admin_page.goto(stack.url + f"/ui/memories/{memory_id}")
    admin_page.get_by_role("button", name="Pin").click()
    trail = admin_page.get_by_role("region", name="Audit trail").locator("li")
    assert [t.split()[0] for t in trail.all_inner_texts()] == ["update", "write"]
    assert "request" in trail.first.inner_text()


def test_superseding_a_memory_shows_the_new_version_with_the_old_one_in_its_history(admin_page, stack):
    memory_id = stack.remember("Deploys go out on Tuesdays")
    admin_page.goto(stack.url + f"/ui/memories/{memory_id}")
    admin_page.locator("summary", has_text="Supersede").click()
    admin_page.get_by_label("New content").fill("Deploys go out on Thursdays since the freeze")
    admin_page.get_by_role("button", name="Supersede").click()
    assert "since the freeze" in admin_page.locator("#content").inner_text()
    history = admin_page.get_by_role("region", name="History")
    history.get_by_role("link", name="Deploys go out on Tuesdays").click()
    assert admin_page.locator(".badge.old").first.inner_text() == "superseded"
    assert admin_page.get_by_role("region", name="Change").count() == 0  # the old version is closed


def test_forgetting_a_memory_after_confirming_removes_it(admin_page, stack):
    memory_id = stack.remember("A throwaway note to forget")
    admin_page.goto(stack.url + f"/ui/memories/{memory_id}")
    admin_page.get_by_role("button", name="Forget").click()
    assert admin_page.get_by_role("status").inner_text() == "The memory was forgotten."
    try:
        stack.container.memories.get(stack.principal(stack.admin_a), memory_id)
        raise AssertionError("the memory is still there")
    except NotFound:
        pass


# --- sessions and context ------------------------------------------------------------------------------
def test_a_session_page_shows_its_stages_and_failure_reason_and_reprocess_queues_it(admin_page, stack):
    admin_page.get_by_role("link", name="Sessions", exact=True).click()
    admin_page.get_by_role("link", name=FAILED_SESSION).click()
    assert (
        "The chunk stage failed: the transcript has no turns" in admin_page.get_by_role("alert").inner_text()
    )
    stages = admin_page.locator(".stage").all_inner_texts()
    assert stages[0].startswith("parse") and "done" in stages[0] and "failed" in stages[1]
    admin_page.goto(stack.url + f"/ui/sessions/{LEARNED_SESSION}")
    assert all("done" in s for s in admin_page.locator(".stage").all_inner_texts())
    assert "PostgreSQL" in admin_page.get_by_role("region", name="Memories from this session").inner_text()
    admin_page.get_by_role("button", name="Reprocess").click()
    assert admin_page.get_by_role("status").inner_text() == "Queued: the session's pipeline runs again."
    assert stack.container.runner.wait_idle(120)
    admin_page.reload()
    assert "learned" in admin_page.get_by_role("heading", level=1).inner_text()


def test_context_preview_shows_the_next_sessions_block_without_consuming_the_handoff(admin_page, stack):
    project = "github.com/acme/context-preview"
    stack.remember("The preview project builds with make release", project=project)
    HandoffService(stack.container.memories).save_handoff(
        stack.principal(stack.admin_a),
        HandoffNote(project=project, summary="Half-way through the checkout refactor", agent="claude-code"),
    )
    admin_page.get_by_role("link", name="Context", exact=True).click()
    admin_page.get_by_label("Project").fill(project)
    admin_page.get_by_label("Agent").fill("claude-code")
    admin_page.get_by_role("button", name="Preview").click()
    block = admin_page.locator("#context-block").inner_text()
    assert "Where you left off" in block and "checkout refactor" in block
    admin_page.reload()
    assert "checkout refactor" in admin_page.locator("#context-block").inner_text()  # still pending
    real = stack.container.context.assemble(stack.principal(stack.admin_a), project, "claude-code")
    assert real.handoff_id is not None and "checkout refactor" in real.markdown
    admin_page.reload()
    assert "checkout refactor" not in admin_page.locator("#context-block").inner_text()  # now delivered


def test_the_digest_page_catches_up_on_a_projects_sessions_oldest_first(admin_page, stack):
    project = "github.com/acme/digest-ui"
    alice = stack.principal(stack.admin_a)
    for n, agent in ((1, "claude-code"), (2, "codex")):
        when = datetime(2026, 11, n, 9, 0, tzinfo=UTC)
        stack.container.sessions.put(
            Session(f"ui-digest-{n}", stack.team_a, project, agent, member="alice", started_at=when)
        )
    first = Provenance(session_id="ui-digest-1")
    old = stack.remember("The staging host is web1.internal", project=project, provenance=first)
    todo = stack.remember("Rotate the staging certificate", project=project, kind=MemoryKind.EPISODE,
                          tags=("open",), provenance=first)  # fmt: skip
    new = NewMemory(kind=MemoryKind.FACT, content="The staging host is web2.internal", project=project,
                    provenance=Provenance(session_id="ui-digest-2"))  # fmt: skip
    stack.container.memories.supersede(alice, old, new)
    stack.container.memories.update(alice, todo, MemoryPatch(details={"closed_by": "ui-digest-2"}))
    stack.remember("Decide on the CDN", project=project, kind=MemoryKind.EPISODE, tags=("open",),
                   provenance=Provenance(session_id="ui-digest-2"))  # fmt: skip

    admin_page.get_by_role("link", name="Digest", exact=True).click()
    admin_page.get_by_label("Project").fill(project)
    admin_page.get_by_role("button", name="Catch me up").click()
    cards = admin_page.locator("#digest-sessions > li")
    assert cards.count() == 2
    assert "ui-digest-1" in cards.nth(0).inner_text() and "ui-digest-2" in cards.nth(1).inner_text()
    second = cards.nth(1).inner_text()
    assert "web1.internal" in second and "web2.internal" in second  # changed: old → new
    assert "Closed:" in second and "Rotate the staging certificate" in second
    still = admin_page.locator("#still-open").inner_text()
    assert "Decide on the CDN" in still and "Rotate the staging" not in still
    admin_page.get_by_label("Or since").fill("2026-11-02")
    admin_page.get_by_role("button", name="Catch me up").click()
    assert admin_page.locator("#digest-sessions > li").count() == 1


def test_the_reindex_page_shows_the_served_model_and_that_no_rebuild_is_on(admin_page, stack):
    admin_page.get_by_role("link", name="Reindex", exact=True).click()
    assert admin_page.get_by_role("heading", name="Search index").is_visible()
    assert admin_page.locator("#reindex-served").inner_text() == stack.container.embedder.version
    assert "no rebuild is on" in admin_page.locator("#reindex-building").inner_text()
    assert admin_page.locator("#reindex-progress").is_visible()


# --- keys ----------------------------------------------------------------------------------------------
def test_an_admin_creates_a_key_shown_once_and_revoking_it_signs_its_sessions_out(
    admin_page, open_page, stack
):
    admin_page.get_by_role("link", name="Keys", exact=True).click()
    admin_page.get_by_label("Member").fill("carol")
    admin_page.get_by_label("Name").fill("laptop")
    admin_page.get_by_label("write").check()
    admin_page.get_by_role("button", name="Create key").click()
    secret = admin_page.locator("#new-secret").inner_text()
    assert secret.startswith("cairn_")
    admin_page.goto(stack.url + "/ui/keys")
    assert secret not in admin_page.content()  # shown once only

    carol = open_page()
    sign_in(carol, stack, secret)
    assert "carol" in carol.locator(".whoami").inner_text()

    admin_page.get_by_role("button", name="Revoke laptop of carol").click()
    assert admin_page.get_by_role("status").inner_text() == "The key was revoked."
    carol.goto(stack.url + "/ui/memories")
    assert carol.url.endswith("/ui/login")


def test_an_admin_creates_a_key_limited_to_a_project_which_sees_only_that_project(
    admin_page, open_page, stack
):
    admin_page.get_by_role("link", name="Keys", exact=True).click()
    admin_page.get_by_label("Member").fill("dave")
    admin_page.get_by_label("Name").fill("billing-bot")
    admin_page.get_by_label("Projects").fill(OTHER_PROJECT)
    admin_page.get_by_role("button", name="Create key").click()
    secret = admin_page.locator("#new-secret").inner_text()
    assert OTHER_PROJECT in admin_page.locator("tr", has_text="billing-bot").inner_text()

    dave = open_page()
    sign_in(dave, stack, secret)
    dave.goto(stack.url + "/ui/memories")
    listed = dave.locator("main").inner_text()
    assert "Invoices are generated nightly" in listed and "Never commit secrets" in listed  # team-wide too
    assert "payments stub" not in listed
    dave.goto(stack.url + f"/ui/memories/{stack.memory_ids['stub']}")
    assert "404" in dave.title()


# --- confinement ---------------------------------------------------------------------------------------
def test_a_read_only_key_sees_no_change_controls_and_its_forged_posts_are_refused(open_page, stack):
    page = open_page()
    sign_in(page, stack, stack.reader_a)
    memory_id = stack.memory_ids["stub"]
    page.goto(stack.url + f"/ui/memories/{memory_id}")
    assert page.get_by_role("region", name="Change").count() == 0
    assert page.get_by_role("button", name=re.compile("Forget|Pin|Save|Supersede")).count() == 0
    assert page.get_by_role("link", name="Keys").count() == 0
    page.goto(stack.url + f"/ui/sessions/{LEARNED_SESSION}")
    assert page.get_by_role("button", name="Reprocess").count() == 0
    csrf = _csrf(page)
    for path, form in [
        (f"/ui/memories/{memory_id}/forget", {}),
        (f"/ui/memories/{memory_id}/edit", {"content": "forged"}),
        (f"/ui/sessions/{LEARNED_SESSION}/reprocess", {}),
        ("/ui/keys", {"member": "mallory", "name": "x", "scope": "admin"}),
    ]:
        with_token = page.request.post(stack.url + path, form={"csrf": csrf, **form}, max_redirects=0)
        assert with_token.status == 403, (path, with_token.status)
        without = page.request.post(stack.url + path, form=form, max_redirects=0)
        assert without.status == 403, (path, without.status)
    page.goto(stack.url + "/ui/keys")
    assert page.get_by_role("heading", name="Not allowed").is_visible()
    stored = stack.container.memories.get(stack.principal(stack.admin_a), memory_id)
    assert stored.content == "Integration tests need the payments stub on port 9100"


def test_an_admins_post_without_the_sessions_csrf_token_is_refused(admin_page, stack):
    memory_id = stack.remember("A note a forged form must not change")
    resp = admin_page.request.post(
        stack.url + f"/ui/memories/{memory_id}/forget", form={"csrf": "forged"}, max_redirects=0
    )
    assert resp.status == 403
    assert stack.container.memories.get(stack.principal(stack.admin_a), memory_id)


def test_team_bs_session_sees_nothing_of_team_a(open_page, stack):
    page = open_page()
    sign_in(page, stack, stack.admin_b)
    assert B_PROJECT in page.content()
    assert PROJECT not in page.content() and LEARNED_SESSION not in page.content()
    page.goto(stack.url + f"/ui/memories/{stack.memory_ids['stub']}")
    assert page.get_by_role("heading", name="Not found").is_visible()
    page.goto(stack.url + f"/ui/sessions/{LEARNED_SESSION}")
    assert page.get_by_role("heading", name="Not found").is_visible()
    page.goto(stack.url + "/ui/memories?q=payments+stub+port")
    assert page.locator(".mem").count() == 0
    page.goto(stack.url + f"/ui/context?project={PROJECT}")
    assert "payments stub" not in page.locator("#context-block").inner_text()
    page.goto(stack.url + "/ui/keys")
    assert "alice" not in page.content() and "rita" not in page.content()
    resp = page.request.post(
        stack.url + f"/ui/memories/{stack.memory_ids['stub']}/forget",
        form={"csrf": _csrf(page)},
        max_redirects=0,
    )
    assert resp.status == 404
    team_memory = stack.container.memories.get(stack.principal(stack.admin_a), stack.memory_ids["team"])
    assert team_memory.scope is Scope.TEAM


# --- the page itself -----------------------------------------------------------------------------------
def test_every_page_is_served_with_a_strict_csp_and_runs_without_inline_script(admin_page, stack, traffic):
    for path in ["/ui/", "/ui/memories", f"/ui/memories/{stack.memory_ids['stub']}", "/ui/sessions",
                 f"/ui/context?project={PROJECT}", f"/ui/digest?project={PROJECT}", "/ui/keys"]:  # fmt: skip
        response = admin_page.goto(stack.url + path)
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert admin_page.locator("script:not([src])").count() == 0
    assert not [e for e in traffic.console_errors if "Content Security Policy" in e]
    assert traffic.hosts == {"127.0.0.1"}


def test_the_pages_fit_a_phone_screen_without_sideways_scrolling(open_page, stack):
    page = open_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    sign_in(page, stack, stack.admin_a)
    for path in ["/ui/", "/ui/memories", f"/ui/memories/{stack.memory_ids['stub']}", "/ui/context",
                 f"/ui/digest?project={PROJECT}"]:  # fmt: skip
        page.goto(stack.url + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path


def test_the_main_links_and_buttons_are_reachable_from_the_keyboard(open_page, stack):
    page = open_page()
    page.goto(stack.url + "/ui/login")
    # the key field has focus on load; on a busy machine the browser applies autofocus a moment after
    # `goto` returns, and keys typed before then go nowhere
    page.wait_for_function("document.activeElement && document.activeElement.id === 'key'")
    page.keyboard.type(stack.admin_a)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/ui/$"))
    page.wait_for_load_state("load")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Memories":
            break
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/ui/memories$"))
    assert page.get_by_role("heading", name="Memories").is_visible()


def test_a_tampered_session_cookie_is_treated_as_signed_out(admin_page, stack):
    [cookie] = [c for c in admin_page.context.cookies() if c["name"] == "cairn_ui"]
    payload, signature = cookie["value"].split(".")
    admin_page.context.clear_cookies()
    admin_page.context.add_cookies([{**cookie, "value": f"{payload}x.{signature}"}])
    admin_page.goto(stack.url + "/ui/memories")
    assert admin_page.url.endswith("/ui/login")

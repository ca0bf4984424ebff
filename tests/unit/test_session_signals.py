"""Session-level signals: checks, git activity, plans, summaries and todos (pipeline.signals)."""

from __future__ import annotations

import pytest
from cairn.domain.models import MemoryKind
from cairn.pipeline.learning.learners import WHOLE_SESSION, learn
from cairn.pipeline.learning.signals import purpose_of, runner_echo, sections
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.session import read_events
from cairn.transcripts.model import Role

from tests.unit.session_events import ran


def session_signals(events: list[EventDoc]) -> list:
    """What the whole-session learners learn of `events`."""
    return learn(read_events(events), WHOLE_SESSION)


pytestmark = pytest.mark.unit


def ev(seq, role, text="", **kw) -> EventDoc:
    return EventDoc(seq=seq, line_no=seq, role=role, text=text, **kw)


@pytest.mark.parametrize(
    ("command", "description", "purpose"),
    [
        ("mise run test:ci", "", "test"),
        ("cargo clippy --all-targets", "Run the linter", "lint"),
        ("mix format --check-formatted", "", "format"),
        ("bunx tsc --noEmit", "", "type-check"),
        ("./gradlew assemble", "Build the app", "build"),
        ("git status", "Check the working tree", None),
        ("workmux add --help", "", None),
        ("nl -ba packages/core/test/results.test.ts", "", None),
        # a look around, whatever its description calls it
        ("printenv", "Check the environment", None),
        ("entire status", "", None),
        # "check" in a description is the verb "look at"; names in a payload or environment are data
        ("./scripts/hook.sh", "Check hook recovered", None),
        ("""HOOK_INPUT='{"session_id":"test"}' entire hooks pre-tool-use""", "", None),
        ("""SESSION=test-1 sh -c 'if ! command -v entire; then exit 1; fi'""", "", None),
        ("./scripts/verify.sh", "Run the test suite", "test"),
        # a flag says how a command runs, never what it is for
        ("mix dialyzer --format short", "", None),
        ("mix dialyzer --format short 2>&1 | tail -20", "Run Dialyzer type checks", "type-check"),
        ("npx eslint --format json src", "", "lint"),
        ("go test -run TestFormat ./...", "", "test"),
    ],
)
def test_a_check_is_recognised_by_what_its_command_or_description_says_it_does(command, description, purpose):
    assert purpose_of(command, description) == purpose


def test_the_checks_that_passed_become_one_procedure_in_the_order_they_ran():
    events = [
        *ran(1, "mise run fmt", "ok"),
        *ran(3, "mise run lint 2>&1 | tail -20", "0 issues"),
        *ran(5, "mise run test:ci", "FAIL", error=True),
        *ran(7, "mise run test:ci", "ok"),
        *ran(9, "ls cmd/", "main.go"),
    ]
    (checks,) = [c for c in session_signals(events) if "checks" in c.tags]
    assert checks.kind is MemoryKind.PROCEDURE
    assert checks.content.index("`mise run fmt`") < checks.content.index("`mise run lint`")
    assert "`mise run test:ci`" in checks.content and "ls cmd/" not in checks.content


@pytest.mark.parametrize(
    ("output", "echoed"),
    [
        ("$ bun test src/\nbun test v1.3.5\n 12 pass", ["bun test src/"]),  # bun, yarn
        (
            "[test:ci] $ go test -tags=integration -race ./...\nok  pkg 1.2s",
            ["test:ci: go test -tags=integration -race ./..."],
        ),  # mise
        ("\n> shop@1.0.0 test\n> vitest run\n\n ✓ 3 tests", ["vitest run"]),  # npm, pnpm
        ('> {\n  "a": 1\n}', []),  # a quoted JSON line is no runner's echo
        ("PASS src/a.test.ts", []),
    ],
)
def test_what_a_script_runner_says_it_runs_is_read_from_its_output(output, echoed):
    assert runner_echo(output) == echoed


def test_a_check_run_through_a_script_says_what_the_script_runs():
    events = [*ran(1, "cd web && bun run lint 2>&1", "$ biome check --error-on-warnings\nChecked 277 files")]
    (checks,) = [c for c in session_signals(events) if "checks" in c.tags]
    assert "lint: `bun run lint` (runs `biome check --error-on-warnings`)" in checks.content


def test_git_activity_is_read_from_gits_own_output():
    events = [
        *ran(1, "git checkout -b rwr/fix-empty-repo", "Switched to a new branch 'rwr/fix-empty-repo'"),
        *ran(3, "git commit -m 'Fix empty repo'", "[rwr/fix-empty-repo f0bea619] Fix empty repo\n 3 files"),
        *ran(5, "git push -u origin HEAD", "To github.com:o/r.git\n * [new branch]  rwr/fix -> rwr/fix"),
        *ran(7, "gh pr create --fill", "https://github.com/o/r/pull/255\n"),
    ]
    (git,) = [c for c in session_signals(events) if "git" in c.tags]
    for needle in ("rwr/fix-empty-repo", "f0bea619", "Fix empty repo", "new branch", "/pull/255"):
        assert needle in git.content
    assert "pushed new branch rwr/fix." in git.content  # a branch pushed to its own name is named once
    assert git.details["branches"] == ["rwr/fix-empty-repo"]  # where its commits went


def test_the_git_episode_lists_the_branches_its_commits_went_to_in_order():
    events = [
        *ran(1, "git commit -m 'a'", "[main 1a2b3c4] a\n 1 file changed"),
        *ran(3, "git checkout -b ollama", "Switched to a new branch 'ollama'"),
        *ran(5, "git commit -m 'b'", "[ollama 5d6e7f8] b\n 2 files changed"),
    ]
    (git,) = [c for c in session_signals(events) if "git" in c.tags]
    assert git.details["branches"] == ["main", "ollama"]


def test_commits_pushed_to_a_branch_of_the_same_name_name_it_once():
    events = [*ran(1, "git push", "To github.com:o/r.git\n   cae3aee6..2119d151  fix/x -> fix/x")]
    (git,) = [c for c in session_signals(events) if "git" in c.tags]
    assert "pushed cae3aee6..2119d151 to fix/x" in git.content


def test_a_plan_handed_over_is_kept_section_by_section():
    plan = (
        "Implement the following plan:\n\n# Fix: empty repo\n\n## Context\n"
        + "A fresh repository has no HEAD, so initialising a session fails with a cryptic error. " * 4
        + "\n"
        + "## What this does NOT change\n- No attempt to fully support empty repos (too many HEAD uses)\n"
        + "## Verification\n```\nmise run fmt && mise run test:ci\n```\nManual test in /tmp/test-empty\n"
    )
    found = {c.title: c for c in session_signals([ev(1, Role.USER, plan)])}
    scope = next(c for t, c in found.items() if t.endswith("What this does NOT change"))
    verify = next(c for t, c in found.items() if t.endswith("Verification"))
    assert scope.kind is MemoryKind.DECISION and "too many HEAD uses" in scope.content
    assert verify.kind is MemoryKind.PROCEDURE and "/tmp/test-empty" in verify.content


def test_an_approved_plan_is_a_plan_however_short():
    plan = (
        "Implement the following plan:\n\n# Sync\n\n"
        "## Steps\n- add the checkpoint remote and fetch it on refresh\n\n"
        "## Tests\n- `pnpm test` with a repository that has the remote\n"
    )
    approved = ev(1, Role.USER, plan).model_copy(update={"is_plan": True})
    titles = [c.title for c in session_signals([approved])]
    assert "Plan «Sync»: Steps" in titles and "Plan «Sync»: Tests" in titles
    assert not [
        c for c in session_signals([ev(1, Role.USER, plan)]) if c.title and c.title.startswith("Plan")
    ]


def test_a_compaction_summary_is_split_into_its_sections_with_pending_work_tagged_open():
    summary = (
        "1. Primary Request and Intent:\n   Add a tree view to the Context tab, grouped by folder.\n"
        "2. Errors and fixes:\n   useContext returned undefined: wrapped the tree in ChakraProvider.\n"
        "3. Pending Tasks:\n   Push the branch and remove the unused Chakra dependency afterwards.\n"
    )
    found = session_signals([ev(1, Role.SUMMARY, summary)])
    by_title = {c.title.split(": ", 1)[1]: c for c in found}
    assert by_title["Errors and fixes"].kind is MemoryKind.EPISODE
    assert "open" in by_title["Pending Tasks"].tags
    assert sections("just one paragraph") == []


def test_a_summarys_pending_section_that_says_none_is_left_is_a_recap_not_open_work():
    summary = (
        "1. Pending Tasks:\n   - None explicitly requested. All tasks have been completed:\n"
        "     - PR 12 merged and the release tagged v0.4.1\n"
        "2. Current Work:\n   Refactoring the supervisor tree so the cache restarts on its own.\n"
    )
    found = {c.title.split(": ", 1)[1]: c for c in session_signals([ev(1, Role.SUMMARY, summary)])}
    assert "open" not in found["Pending Tasks"].tags and "retold" in found["Pending Tasks"].tags
    assert "open" in found["Current Work"].tags


def test_the_todo_lists_unfinished_items_are_open_items():
    todos = {
        "todos": [{"content": "Write tests", "status": "completed"}, {"content": "Push", "status": "pending"}]
    }
    events = [ev(1, Role.TOOL_CALL, tool_name="TodoWrite", tool_input=todos, tool_call_id="t")]
    (todo,) = session_signals(events)
    assert "Push" in todo.content and "Write tests" not in todo.content and "open" in todo.tags


def test_pending_work_of_a_summary_the_session_went_on_from_is_not_left_open():
    summary = "1. Pending Tasks:\n   Push the branch and remove the unused Chakra dependency afterwards.\n"
    summary += "2. Current Work:\n   Fixing the duplicate key warnings in the tree builder right now.\n"
    found = session_signals([ev(1, Role.SUMMARY, summary), ev(2, Role.USER, "go on")])
    assert found and all("open" not in c.tags for c in found)
    assert all("taken-up" in c.tags for c in found)  # so the next session is not told to do it again
    # what the session went on to do is its history, not a fact about the project
    assert all(c.kind is MemoryKind.EPISODE for c in found)


def test_the_shells_own_test_command_and_a_branch_listing_are_not_checks_or_branches():
    events = [*ran(1, "test -f .workmux.yaml", ""), *ran(3, "git branch --list", "* main")]
    assert purpose_of("test -f .workmux.yaml") is None
    assert not [c for c in session_signals(events) if "git" in c.tags or "checks" in c.tags]


def test_commits_are_listed_under_their_branch_named_once():
    events = [
        *ran(1, "git commit -m a", "[fix/x aaaaaaa1] First change"),
        *ran(3, "git commit -m b", "[fix/x bbbbbbb2] Second change"),
        *ran(5, "git commit -m c", "[main ccccccc3] Hotfix"),
    ]
    (git,) = [c for c in session_signals(events) if "git" in c.tags]
    assert "commits on `fix/x`: `aaaaaaa1` First change; `bbbbbbb2` Second change" in git.content
    assert "commits on `main`: `ccccccc3` Hotfix" in git.content and git.content.count("fix/x") == 1


def test_the_last_git_log_listing_is_the_repositorys_latest_commits():
    oneline = "b531cc8 (HEAD -> main) Replace inline agent SVGs\n345c4c3 Add remediation impact evaluation"
    full = "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@b.c>\nDate:   Mon\n\n"
    full += "    Fix tree view\n"
    events = [
        *ran(1, "git log --oneline -2", "aaaaaaa Older listing"),
        *ran(3, "git log -p -1", full),  # a patch is read for its diff, not as a listing
        *ran(5, "rtk git log --oneline -2", oneline),
    ]
    (history,) = [c for c in session_signals(events) if "history" in c.tags]
    assert history.content.endswith(
        ": `b531cc8` Replace inline agent SVGs; `345c4c3` Add remediation impact evaluation"
    )
    assert history.details["about"] == "latest commits"
    (default,) = [c for c in session_signals(ran(1, "git log -1", full)) if "history" in c.tags]
    assert default.content.endswith(": `01234567` Fix tree view")


def test_a_git_log_that_lists_only_the_sessions_own_commits_adds_nothing():
    events = [
        *ran(1, "git commit -m 'Fix empty repo'", "[main f0bea619] Fix empty repo\n 3 files changed"),
        *ran(3, "git log --oneline -1", "f0bea619 (HEAD -> main) Fix empty repo"),
    ]
    assert not [c for c in session_signals(events) if "history" in c.tags]


def test_a_plan_titled_plan_is_not_named_plan_twice():
    plan = "Implement the following plan:\n\n# Plan: Tree view\n\n## Context\n" + "The tab lists files. " * 20
    plan += "\n## Files to create\n" + "- `src/tree.ts` builds the tree from the flat list. " * 3
    plan += "\n## Verification\n" + "1. `bun run test` passes and the tree renders. " * 3
    found = session_signals([ev(1, Role.USER, plan)])
    assert found and all(c.title.startswith("Plan «Tree view»: ") for c in found)


# the Copilot CLI session's closing reply (copilot-cli/agentv, line 549), shortened
ACCOUNT = (
    "**Root cause & fix summary:**\n\nThe error occurred because a subagent ran in a worktree whose branch "
    "predated the `entire enable` commit, so `.entire/settings.json` was absent there. Without settings "
    "`entire` showed a consent TUI; with no TTY in the hook it crashed and the CLI denied the tool use.\n\n"
    "**The fix** guards every hook in `.github/hooks/entire.json`. Committed to `main` as `a87a7777`."
)


def _work(*after):
    ran = [
        ev(2, Role.TOOL_CALL, tool_name="bash", tool_input={"command": "entire doctor"}, tool_call_id="c"),
        ev(3, Role.TOOL_RESULT, "ok", tool_call_id="c"),
    ]
    return [ev(1, Role.USER, "investigate why the hook errors"), *ran, *after]


def test_the_agents_closing_account_of_the_last_request_is_an_episode():
    [ended] = [c for c in session_signals(_work(ev(4, Role.ASSISTANT, ACCOUNT))) if "outcome" in c.tags]
    assert ended.kind is MemoryKind.EPISODE and ended.title == "How the last request ended"
    assert "a87a7777" in ended.content and ended.line_start == 4


def test_a_reply_work_went_on_from_a_bare_done_or_an_answer_without_work_is_no_account():
    went_on = _work(
        ev(4, Role.ASSISTANT, ACCOUNT),
        ev(5, Role.TOOL_CALL, tool_name="bash", tool_input={"command": "git push"}, tool_call_id="d"),
    )
    answered = [ev(1, Role.USER, "what does the hook do?"), ev(2, Role.ASSISTANT, ACCOUNT)]
    for events in (went_on, _work(ev(4, Role.ASSISTANT, "Done. Committed.")), answered):
        assert not [c for c in session_signals(events) if "outcome" in c.tags]


def test_an_account_that_leaves_the_commit_to_the_person_names_the_files_it_left_uncommitted():
    edit = {"file_path": "/home/me/app/lib/export.ex", "old_string": "a", "new_string": "b"}
    events = [
        ev(1, Role.USER, "add the CSV export"),
        ev(2, Role.TOOL_CALL, tool_name="Edit", tool_input=edit, tool_call_id="e"),
        ev(3, Role.TOOL_RESULT, "ok", tool_call_id="e"),
        ev(
            4,
            Role.ASSISTANT,
            ACCOUNT.replace("Committed to `main` as `a87a7777`.", "Ready for you to commit."),
        ),
    ]
    [ended] = [c for c in learn(read_events(events, "/home/me/app"), WHOLE_SESSION) if "outcome" in c.tags]
    assert ended.details["handover"] == {"asks": ["commit"], "paths": ["lib/export.ex"]}
    # the same words after a commit that holds the edit hand nothing over
    committed = [
        *events[:3],
        ev(4, Role.TOOL_CALL, tool_name="Bash", tool_input={"command": "git commit -am x"}, tool_call_id="g"),
        ev(5, Role.TOOL_RESULT, "[main 1a2b3c4] x", tool_call_id="g"),
        ev(6, Role.ASSISTANT, events[3].text),
    ]
    [ended] = [c for c in learn(read_events(committed, "/home/me/app"), WHOLE_SESSION) if "outcome" in c.tags]
    assert "handover" not in ended.details


# the shape of Claude Code's compaction summary ("This session is being continued from a previous
# conversation…"), its sections numbered as the harness writes them
SUMMARY = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   - Move the MCP server onto the map host so it reaches the database on localhost
2. Errors and fixes:
   - nginx answered 404 for /api/ until a location block proxied it to port 8080
3. All User Messages:
   - "can you check why the deploy health check fails on the map host?"
   - "please add the claude mcp add one-liner to the README"
"""


def test_a_summary_section_that_retells_the_users_messages_is_tagged_so_and_the_others_are_not():
    events = [
        ev(0, Role.USER, "can you check why the deploy health check fails on the map host?"),
        ev(1, Role.ASSISTANT, "The health check waited 2 s; it now retries five times."),
        ev(2, Role.USER, "please add the claude mcp add one-liner to the README"),
        ev(3, Role.SUMMARY, SUMMARY),
    ]
    tags = {c.title: c.tags for c in session_signals(events) if "summary" in c.tags}
    assert "retold" in tags["Session summary: All User Messages"]
    assert "retold" not in tags["Session summary: Errors and fixes"]
    assert "retold" not in tags["Session summary: Primary Request and Intent"]


def test_a_session_that_only_looked_at_git_leaves_its_status_marked_as_all_it_did():
    looked = [*ran(1, "git status --short", "?? src/panel.ts\n")]
    committed = [*looked, *ran(3, "git commit -m 'panel'", "[main 1a2b3c4] panel\n 1 file changed")]
    (status,) = [c for c in session_signals(looked) if "git" in c.tags]
    (work,) = [c for c in session_signals(committed) if "git" in c.tags]
    assert status.details.get("status_only") and not work.details.get("status_only")

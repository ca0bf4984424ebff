"""What git reported of unfinished work at the end (pipeline.git_state), said by handoff and git episode."""

from __future__ import annotations

import pytest
from cairn.pipeline.reading import git_state as reader
from cairn.pipeline.reading.failures import unresolved_errors as unresolved_of
from cairn.pipeline.reading.session import read_events
from cairn.pipeline.reading.shell import shell_calls
from cairn.pipeline.remembering.reflection import handoff_text

from tests.unit.session_events import ran


def git_state(events):
    return reader.git_state(shell_calls(events))


def unresolved_errors(events):
    return unresolved_of(shell_calls(events))


pytestmark = pytest.mark.unit


STATUS = (
    "On branch main\nYour branch is ahead of 'origin/main' by 2 commits.\n"
    "Changes not staged for commit:\n  a.go"
)


def test_the_last_git_status_tells_what_was_left_uncommitted_or_unpushed():
    state = git_state(ran(1, "git status", STATUS))
    assert state is not None and "ahead" in state and "Changes not staged" in state


def test_a_commit_after_the_status_settles_what_was_staged_not_what_is_unpushed_or_untracked():
    status = (
        "📌 main...origin/main [ahead 21]\n✅ Staged: 6 files\n   frontend/bun.lock\n"
        "❓ Untracked: 2 files\n   .husky/commit-msg\n   .husky/post-commit"
    )
    state = git_state([*ran(1, "rtk git status", status), *ran(3, "git commit -m x", "[main abc1234] x")])
    assert state == (
        "📌 main...origin/main [ahead 21]; ❓ Untracked: 2 files; "
        "untracked: .husky/commit-msg, .husky/post-commit; then committed, not pushed"
    )


def test_a_push_after_the_status_settles_the_unpushed_commits():
    status = "## main...origin/main [ahead 2]\n M a.go\n?? notes.md"
    state = git_state([*ran(1, "git status --short --branch", status), *ran(3, "git push", "")])
    assert state == "untracked: notes.md; then pushed"


def test_a_checkout_after_the_status_makes_it_stale():
    assert git_state([*ran(1, "git status", STATUS), *ran(3, "git checkout -b other", "")]) is None


def test_an_error_a_later_line_ran_again_successfully_is_not_unresolved():
    events = [
        *ran(1, "git fetch origin && git status --short", "remote: Not Found", error=True),
        *ran(3, "git remote set-url origin https://a/b.git && git fetch origin && git status --short", ""),
        *ran(5, "make lint", "error: E501", error=True),
    ]
    assert [u["command"] for u in unresolved_errors(events)] == ["make lint"]


def test_the_handoff_names_what_still_fails_and_leaves_the_errors_to_their_own_memories():
    summary = {"last_request": "ship it", "next_steps": [], "open_questions": [], "git_state": None}
    text = handoff_text(summary, [{"command": "make lint", "error": "error: E501 line too long"}])
    assert text == "Last request: ship it\nStill failing: `make lint`"


def test_the_git_episode_keeps_the_state_at_the_end_for_when_the_handoff_is_gone():
    from cairn.pipeline.learning.learners import WHOLE_SESSION, learn

    status = "## main...origin/main [ahead 21]\n M src/tree.ts"
    events = [
        *ran(1, "git status --short --branch", status),
        *ran(3, "git commit -am fix", "[main 37016ac] fix"),
    ]
    episode = next(c for c in learn(read_events(events), WHOLE_SESSION) if "git" in c.tags)
    assert "`37016ac` fix" in episode.content
    assert (
        "at the end, git status: ## main...origin/main [ahead 21]; then committed, not pushed"
        in episode.content
    )
    assert (episode.line_start, episode.line_end) == (1, 4)


def test_an_error_a_working_variant_answered_is_not_unresolved():
    events = [
        *ran(
            1,
            "bd update t.5 --claim --json && workmux add fix/x -b",
            "Error claiming t.5: already claimed",
            True,
        ),
        *ran(3, "bd update t.5 --status in_progress --json && workmux add fix/x -b", "ok"),
    ]
    assert unresolved_errors(events) == []


def test_one_build_failing_in_three_spellings_then_run_from_its_folder_is_not_unresolved():
    events = [
        *ran(1, "go build ./go/cmd/app/ 2>&1", "/bin/bash: line 1: go: command not found", True),
        *ran(3, "~/go/bin/go build ./go/cmd/app/", "/bin/bash: /home/u/go/bin/go: No such file", True),
        *ran(5, "/usr/local/go/bin/go build ./go/cmd/app/", "main module does not contain package", True),
        *ran(7, "cd /home/u/app/go && /usr/local/go/bin/go build ./cmd/app/ 2>&1", ""),
    ]
    assert unresolved_errors(events) == []


def test_another_folders_package_built_without_moving_there_leaves_the_failure_open():
    events = [
        *ran(1, "go build ./go/cmd/app/", "main module does not contain package", True),
        *ran(3, "go build ./cmd/app/", ""),  # from the same folder: another package
    ]
    assert [u["command"] for u in unresolved_errors(events)] == ["go build ./go/cmd/app/"]


def test_the_requests_before_the_last_are_kept_in_order_without_one_word_nudges():
    from cairn.pipeline.models import EventDoc
    from cairn.pipeline.remembering.reflection import summarise
    from cairn.transcripts.model import Role

    asked = ["add a retry to the uploader", "continue", "please fix the origin URL", "yes", "commit"]
    events = [EventDoc(seq=i, line_no=i + 1, role=Role.USER, text=t) for i, t in enumerate(asked)]
    summary = summarise(read_events(events))
    assert summary["last_request"] == "commit"
    assert summary["asked_before"] == ["add a retry to the uploader", "please fix the origin URL"]


def test_each_request_is_reported_by_the_first_exact_sentence_of_the_reply_that_closed_it():
    from cairn.pipeline.models import EventDoc
    from cairn.pipeline.remembering.reflection import summarise
    from cairn.transcripts.model import Role

    def said(seq: int, role: Role, text: str) -> EventDoc:
        return EventDoc(seq=seq, line_no=seq + 1, role=role, text=text)

    events = [
        said(0, Role.USER, "did the value ship?"),
        *ran(1, "npm view pkg versions", "1.2.0-next.1"),
        said(3, Role.ASSISTANT, "Done.\n\n- Verified `mode=force` shipped in `pkg@1.0-rc1`, so kept it."),
        said(4, Role.USER, "where is evidence saved"),
        said(5, Role.ASSISTANT, "Not in the repo. The guide says it goes on:\n\n`private:evidence/<slug>`"),
        said(6, Role.USER, "clean up"),
        said(7, Role.ASSISTANT, "I'm removing `runs/` now."),
        *ran(8, "rm -rf runs", ""),  # cut short: narration, not a report
    ]
    reported = summarise(read_events(events))["reported"]
    assert reported == [
        "Verified `mode=force` shipped in `pkg@1.0-rc1`, so kept it.",
        "The guide says it goes on: `private:evidence/<slug>`",
    ]


def test_a_session_with_no_request_has_no_turn_and_reports_nothing():
    from cairn.pipeline.remembering.reflection import summarise

    summary = summarise(read_events(ran(1, "make test", "ok")))
    assert summary["reported"] == [] and summary["last_request"] is None


def test_a_search_that_matched_nothing_is_no_unresolved_error_but_a_failed_one_is():
    events = [
        *ran(1, "ssh app@h 'journalctl -u web | grep -i timeout'", "Exit code 1\nUbuntu 24.04", True),
        *ran(3, "cargo build 2>&1 | rg warning", "Exit code 1", True),
        *ran(5, "make lint | grep E501", "Exit code 2\nmake: *** No rule to make target 'lint'", True),
        *ran(7, "mix test | grep failures", "Exit code 1\n** (CompileError) lib/a.ex:3: undefined", True),
    ]
    assert [u["command"] for u in unresolved_errors(events)] == [
        "make lint | grep E501",
        "mix test | grep failures",
    ]


# --- the files a session left uncommitted, and the tree a later session's status showed -------------
LONG_STATUS = (
    "On branch main\nYour branch is up to date with 'origin/main'.\n\n"
    'Changes not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n'
    "\tmodified:   .github/workflows/deploy.yml\n\trenamed:    lib/a.ex -> lib/b.ex\n\n"
    'Untracked files:\n  (use "git add <file>..." to include in what will be committed)\n\tmigrations/\n\n'
    'no changes added to commit (use "git add" and/or "git commit -a")'
)


def tree(events, cwd="/home/me/app"):
    return reader.tree_state(shell_calls(events), cwd)


def test_the_last_plain_status_lists_what_was_not_committed_in_git_long_and_short_words():
    long = tree(ran(1, "git status", LONG_STATUS))
    assert long.dirty == (".github/workflows/deploy.yml", "lib/a.ex", "lib/b.ex", "migrations/")
    assert not long.ahead and long.lists("migrations/0001_init.sql") and not long.lists("lib/c.ex")
    short = tree(
        ran(1, "git status --short --branch", "## main...origin/main [ahead 2]\n M src/a.rs\n?? b.rs")
    )
    assert short.dirty == ("src/a.rs", "b.rs") and short.ahead
    clean = tree(ran(1, "git status", "On branch main\nnothing to commit, working tree clean"))
    assert clean.dirty == () and not clean.lists("src/a.rs")


def test_a_wrappers_cut_list_shows_no_file_clean():
    status = "📌 main...origin/main [ahead 2]\n✅ Staged: 4 files\n   src/a.ts\n   src/b.ts\n   ... +2 more"
    cut = tree(ran(1, "rtk git status", status))
    assert cut.dirty == ("src/a.ts", "src/b.ts") and not cut.complete and cut.lists("src/c.ts")


def test_a_file_is_the_same_seen_from_a_subfolder_of_the_checkout():
    seen = tree(ran(1, "git status --short", " M cmd/server/main.go\n M ../README.md"))
    assert seen.lists("go/cmd/server/main.go") and seen.lists("README.md")
    assert not seen.lists("go/cmd/server/other.go")


def test_a_status_of_part_of_the_tree_of_another_folder_or_after_a_stash_shows_nothing():
    assert tree(ran(1, "git status --short src/", "")) is None  # a pathspec lists part of the tree
    assert tree(ran(1, "cd /home/me/other && git status", "On branch main\nnothing to commit")) is None
    stashed = [*ran(1, "git stash", "Saved working directory"), *ran(3, "git status", "nothing to commit")]
    assert tree(stashed) is None  # stashed work is not committed, yet no status lists it
    popped = [
        *ran(1, "git stash && git pull --rebase && git stash pop", "ok"),
        *ran(3, "git status", LONG_STATUS),
    ]
    assert tree(popped) is not None
    assert tree(ran(1, "cd /home/me/app && git status", "nothing to commit, working tree clean")) is not None


def test_the_files_edited_after_the_last_commit_in_the_checkout_are_left_uncommitted():
    from tests.unit.session_events import tool_run

    events = [
        *tool_run(
            1, "Edit", {"file_path": "/home/me/app/src/a.rs", "old_string": "a", "new_string": "b"}, "ok"
        ),
        *ran(3, "git commit -am fix", "[main 1a2b3c4] fix"),
        *tool_run(
            5, "Edit", {"file_path": "/home/me/app/src/b.rs", "old_string": "a", "new_string": "b"}, "ok"
        ),
        *tool_run(7, "Write", {"file_path": "/home/me/.claude/notes.md", "content": "x"}, "ok"),
        *tool_run(
            9, "Edit", {"file_path": "/home/me/app/src/c.rs", "old_string": "a"}, "no match", error=True
        ),
    ]
    reading = read_events(events, "/home/me/app")
    assert reading.uncommitted == ("src/b.rs",)


@pytest.mark.parametrize(
    ("reply", "asks"),
    [
        ("The changes are ready for you to commit and deploy when you're ready!", ["commit", "deploy"]),
        ("You'll need to deploy for the fix to take effect on the live server.", ["deploy"]),
        ("Nothing has been pushed yet; the branch is not pushed.", ["push"]),
        ("These edits are uncommitted.", ["commit"]),
        ("Committed and pushed `4f2a1c9` to main. You can see the commit on GitHub.", []),
        ("Deployed: the health check passes.", []),
    ],
)
def test_a_reply_that_leaves_keeping_its_work_to_the_person_says_which_steps(reply, asks):
    from cairn.pipeline.learning.signals import handed_over

    assert handed_over(reply) == asks


# a Gemini CLI call that stages, shows, commits, tags and shows again, as captured
STAGED_THEN_COMMITTED = (
    "On branch main\nYour branch is up to date with 'origin/main'.\n\nChanges to be committed:\n"
    '  (use "git restore --staged <file>..." to unstage)\n        modified:   CHANGELOG.md\n'
    "        new file:   media/logo.png\n\n[main 4e4af59] Release 0.0.2\n"
    " 2 files changed, 15 insertions(+), 30 deletions(-)\n create mode 100644 media/logo.png\n"
    "On branch main\nYour branch is ahead of 'origin/main' by 1 commit.\n"
    '  (use "git push" to publish your local commits)\n\nnothing to commit, working tree clean'
)
COMMIT_AND_STATUS = 'git add . && git status && git commit -m "Release 0.0.2" && git tag v0.0.2 && git status'


def test_a_line_that_shows_the_status_before_and_after_its_commit_leaves_the_last_one():
    assert git_state(ran(1, COMMIT_AND_STATUS, STAGED_THEN_COMMITTED)) == (
        "Your branch is ahead of 'origin/main' by 1 commit.; nothing to commit, working tree clean"
    )
    left = tree(ran(1, COMMIT_AND_STATUS, STAGED_THEN_COMMITTED))
    assert left is not None and left.dirty == () and left.ahead


def test_a_commit_in_the_same_line_after_its_only_status_settles_what_was_staged():
    state = git_state(
        ran(1, "git add . && git status && git commit -m x", STATUS.replace("not staged", "to be committed"))
    )
    assert state == "Your branch is ahead of 'origin/main' by 2 commits.; then committed, not pushed"

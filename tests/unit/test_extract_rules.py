"""The rule-based extractor: what a person typed and what tools confirmed, never prose or noise."""

from __future__ import annotations

import pytest
from cairn.pipeline.learning.extractor import ExtractContext
from cairn.pipeline.learning.rules import RuleExtractor, errors_and_fixes
from cairn.pipeline.models import ChunkDoc, EventDoc
from cairn.pipeline.reading.shell import shell_calls, shown_command
from cairn.transcripts.model import Role

pytestmark = pytest.mark.unit
CTX = ExtractContext(project="p", agent="claude-code", session_id="s")


class Script:
    """Builds a chunk event by event, numbering lines like a transcript."""

    def __init__(self) -> None:
        self.events: list[EventDoc] = []

    def _add(self, **kw) -> Script:
        n = len(self.events)
        self.events.append(EventDoc(seq=n, line_no=n + 1, **kw))
        return self

    def user(self, text: str, sidechain: bool = False) -> Script:
        return self._add(role=Role.USER, text=text, is_sidechain=sidechain)

    def assistant(self, text: str) -> Script:
        return self._add(role=Role.ASSISTANT, text=text)

    def tool(
        self, name: str, tool_input, output: str, error: bool = False, call: str | None = None
    ) -> Script:
        call = call or f"c{len(self.events)}"
        self._add(role=Role.TOOL_CALL, tool_name=name, tool_input=tool_input, tool_call_id=call)
        return self._add(role=Role.TOOL_RESULT, text=output, is_error=error, tool_call_id=call)

    def bash(self, command: str, output: str = "", error: bool = False) -> Script:
        return self.tool("Bash", {"command": command}, output, error)

    def extract(self):
        chunk = ChunkDoc(chunk_id="c", index=0, line_start=1, line_end=len(self.events), events=self.events)
        return RuleExtractor().extract(chunk, CTX).candidates

    def fixes(self):
        """What the reflect stage pairs over the whole session."""
        return errors_and_fixes(self.events, shell_calls(self.events))


def kinds(candidates):
    return [(c.kind.value, c.content) for c in candidates]


def test_preferences_the_user_states_are_extracted():
    found = Script().user("I prefer tabs over spaces. Please always use pnpm, never npm.").extract()
    assert kinds(found) == [
        ("preference", "I prefer tabs over spaces."),
        ("preference", "Please always use pnpm, never npm."),
    ]
    assert found[0].confidence == 0.8 and found[0].line_start == 1


def test_decisions_carry_rationale_and_alternatives():
    [d] = Script().user("Let's go with SQLite instead of Postgres because it needs no server.").extract()
    assert d.kind.value == "decision"
    assert d.details["alternatives"] == ["Postgres"]
    assert d.details["rationale"] == "it needs no server"


def test_what_might_have_been_chosen_is_no_decision():
    text = "If I used the Ecto query instead of the raw SQL, I would have gotten stale rows."
    assert Script().user(text).extract() == []


def test_a_fact_the_user_states_is_extracted():
    [f] = Script().user("The staging API runs on port 8443 behind the VPN.").extract()
    assert (f.kind.value, f.content) == ("fact", "The staging API runs on port 8443 behind the VPN.")


@pytest.mark.parametrize(
    "text",
    [
        "Should we use Redis here?",
        "Can you always run the tests first?",
        "Thanks! Please update CLAUDE.md for current changes",
        "ok",
        "<cairn-context>Always use pnpm</cairn-context>",
    ],
)
def test_questions_requests_and_injected_text_are_not_memories(text):
    assert Script().user(text).extract() == []


def test_sub_agent_prompts_and_assistant_prose_are_not_the_user_speaking():
    found = (
        Script()
        .user("Use TypeScript, Tailwind CSS for styling, and always add tests.", sidechain=True)
        .assistant("I always prefer to use small functions. Let's go with React.")
        .extract()
    )
    assert found == []


def test_an_approved_plan_states_no_rule_of_the_persons():
    # the plan the agent wrote, sent as the person's message when they approved it (captured wording)
    plan = (
        "Implement the following plan:\n\n# Fix the permission error\n\n## Context\n"
        "**Root cause**: the service ALWAYS sends an `Authorization` header, even to public endpoints.\n\n"
        "## Changes\n- `buildRequest()` must only send auth headers when `requiresAuth` is true\n"
    )
    approved = Script()._add(role=Role.USER, text=plan, is_plan=True)
    assert [c for c in approved.extract() if c.kind.value == "preference"] == []
    typed = Script().user(plan).extract()  # the same words typed are the person's
    assert [c.kind.value for c in typed if c.kind.value == "preference"]


def test_pasted_code_is_not_read_as_a_preference():
    assert Script().user("look:\n```\n# always use globals\nx = 1\n```").extract() == []


def test_a_command_that_worked_becomes_a_procedure_with_counts():
    found = Script().bash("pytest -q", "1 failed", error=True).bash("pytest -q", "12 passed").extract()
    [proc] = [c for c in found if c.kind.value == "procedure" and "fixes_error" not in c.details]
    assert proc.content == "Run the tests with `pytest -q`"
    assert (proc.details["success_count"], proc.details["failure_count"]) == (1, 1)


def test_exploration_commands_are_not_procedures():
    assert Script().bash("ls -la").bash("cat README.md", "hello").bash("git status").extract() == []


def test_an_error_followed_by_a_successful_retry_is_an_episode_and_a_fix():
    found = (
        Script()
        .bash("npm test", "npm warn config\nError: Cannot find module 'zod'", error=True)
        .tool("Edit", {"file_path": "src/schema.ts", "old_string": "a", "new_string": "b"}, "updated")
        .bash("npm install zod", "added 1 package")
        .bash("npm test", "Tests: 4 passed")
        .fixes()
    )
    [episode] = [c for c in found if c.kind.value == "episode"]
    assert episode.content == "`npm test` failed with: Error: Cannot find module 'zod'"
    assert episode.details["outcome"] == "fixed"
    [fix] = [c for c in found if "fixes_error" in c.details]
    assert fix.details["steps"] == ["edit src/schema.ts (`b`)", "run `npm install zod`", "npm test"]
    assert [(lk.predicate, lk.target_ref) for lk in fix.links] == [("fixes", episode.ref)]


def test_a_failed_command_rerun_at_the_end_of_a_chain_is_fixed_by_what_the_chain_ran_first():
    found = (
        Script()
        .bash("mise run fmt", "mise ERROR Config files in mise.toml are not trusted.", error=True)
        .bash("mise trust && mise run fmt", "mise trusted\nformatted 3 files")
        .fixes()
    )
    [episode] = [c for c in found if c.kind.value == "episode"]
    assert episode.details == {
        "outcome": "fixed",
        "error": "mise ERROR Config files in mise.toml are not trusted.",
        "command": "mise run fmt",
    }
    [fix] = [c for c in found if "fixes_error" in c.details]
    assert fix.details["steps"] == ["run `mise trust`", "mise run fmt"]


def test_a_look_the_working_chain_took_before_the_rerun_is_no_step_of_the_fix():
    found = (
        Script()
        .bash("git fetch origin", "remote: Not Found", error=True)
        .bash(
            "git config --show-origin --get-regexp '^remote' || true", "file:.git/config remote.origin.url x"
        )
        .bash(
            "git remote set-url origin https://github.com/acme/shop.git\ngit remote -v\ngit fetch origin",
            "ok",
        )
        .fixes()
    )
    [fix] = [c for c in found if "fixes_error" in c.details]
    assert fix.details["steps"] == [
        "run `git remote set-url origin https://github.com/acme/shop.git`",
        "git fetch origin",
    ]


def test_any_project_command_can_fail_and_be_fixed_not_only_known_tools():
    found = (
        Script()
        .bash("git fetch origin", "fatal: repository 'https://github.com/..git/' not found", error=True)
        .bash("git remote -v", "origin https://github.com/..git (fetch)")
        .bash("gh repo view --json url", '{"url": "https://github.com/acme/app"}')
        .bash("git remote set-url origin https://github.com/acme/app.git")
        .bash("git fetch origin", "")
        .fixes()
    )
    [fix] = [c for c in found if "fixes_error" in c.details]
    # looking around (`git remote -v`, `gh repo view`) is not part of the fix
    assert fix.details["steps"] == [
        "run `git remote set-url origin https://github.com/acme/app.git`",
        "git fetch origin",
    ]


def test_a_success_pairs_with_the_latest_failure_before_it_so_the_fix_is_what_came_since():
    found = (
        Script()
        .bash("make check", "error: missing header foo.h", error=True)
        .bash("apt-get install libfoo-dev", "installed")
        .bash("make check", "error: undefined reference to bar", error=True)
        .tool("Edit", {"file_path": "src/bar.c", "old_string": "a", "new_string": "b"}, "updated")
        .bash("make check", "all good")
        .fixes()
    )
    [fix] = [c for c in found if "fixes_error" in c.details]
    assert fix.details["steps"] == ["edit src/bar.c (`b`)", "make check"]
    assert fix.details["fixes_error"] == "error: undefined reference to bar"


def test_a_failed_chain_is_fixed_once_each_of_its_steps_has_passed_since():
    found = (
        Script()
        .bash(
            "bun run lint 2>&1 && bun run test 2>&1 | tail -3",
            'error: script "lint" exited with code 1',
            error=True,
        )
        .bash("bun run lint:fix")
        .bash("cd web && bun run lint 2>&1")
        .bash("bun run test", "12 pass")
        .fixes()
    )
    [episode] = [c for c in found if c.kind.value == "episode"]
    assert episode.details["outcome"] == "fixed"


@pytest.mark.parametrize(
    "command",
    [
        "ls missing/",
        "grep -r TODO src",
        "test -f .env",
        "git rev-parse --verify feature",
        "gh pr view 12",
        "kubectl get pods",
        "workmux --help",
        "FOO=1 cat x",
        "git branch --list 'fix/*'",
        "cd web && ls dist 2>&1",
    ],
)
def test_a_failing_look_around_is_no_error_to_fix(command):
    found = Script().bash(command, "not found", error=True).bash("mkdir -p x").bash(command, "ok").fixes()
    assert [c for c in found if c.kind.value == "episode"] == []


def test_tool_protocol_errors_are_noise():
    found = (
        Script()
        .tool(
            "Edit",
            {"file_path": "a.py"},
            "<tool_use_error>File has not been read yet.</tool_use_error>",
            error=True,
        )
        .tool("Edit", {"file_path": "a.py"}, "ok")
        .extract()
    )
    assert found == []


def test_an_unfixed_error_is_left_to_the_session_reflection():
    found = Script().bash("npm run build", "TypeError: generate is not a function", error=True).fixes()
    assert [c for c in found if c.kind.value == "episode"] == []


def test_a_chunk_leaves_errors_and_fixes_to_the_whole_session():
    script = Script().bash("npm test", "Error: boom", error=True).bash("npm i zod").bash("npm test", "ok")
    assert [c for c in script.extract() if "fixes_error" in c.details or c.kind.value == "episode"] == []
    assert [c.kind.value for c in script.fixes()] == ["episode", "procedure"]


def test_an_error_that_came_back_and_was_fixed_again_is_one_fix_its_latest():
    found = (
        Script()
        .bash("git fetch origin", "remote: Not Found", error=True)
        .bash("git remote set-url origin https://a/b.git && git fetch origin")
        .bash("git fetch origin", "remote: Not Found", error=True)
        .bash("git config --unset-all remote.origin.url; git remote add origin https://a/b.git")
        .bash("git fetch origin")
        .fixes()
    )
    [fix] = [c for c in found if "fixes_error" in c.details]
    assert fix.details["steps"][0].startswith("run `git config --unset-all remote.origin.url")


def test_urls_printed_by_a_background_server_are_facts():
    found = (
        Script()
        .tool(
            "Bash",
            {"command": "pnpm dev --port 3001", "run_in_background": True},
            "Command running in background with ID: bash_1",
        )
        .tool("BashOutput", {"bash_id": "bash_1"}, "   - Local:        http://localhost:3001\n ✓ Ready")
        .extract()
    )
    assert ("fact", "`pnpm dev --port 3001` serves the app at http://localhost:3001") in kinds(found)


def test_installed_versions_are_facts():
    found = Script().bash("pip install httpx", "Successfully installed anyio-4.4.0 httpx-0.27.0").extract()
    [fact] = [c for c in found if c.kind.value == "fact"]
    assert fact.details["versions"] == {"anyio": "4.4.0", "httpx": "0.27.0"}
    assert fact.content == "Installed versions: anyio@4.4.0, httpx@0.27.0"


@pytest.mark.parametrize(
    ("command", "output", "versions"),
    [
        (
            "bun add @chakra-ui/react",
            "installed @chakra-ui/react@3.33.0\n132 packages installed",
            {"@chakra-ui/react": "3.33.0"},
        ),
        ("mise run fmt", "mise go@1.25.6   [1/3] install\n[fmt] $ gofmt -s -w .", {"go": "1.25.6"}),
        ("go get golang.org/x/sync", "go: added golang.org/x/sync v0.7.0", {"golang.org/x/sync": "0.7.0"}),
        ("cargo add serde", "    Adding serde v1.0.203 to dependencies", {"serde": "1.0.203"}),
        ("bundle install", "Installing rake (13.0.6)", {"rake": "13.0.6"}),
    ],
)
def test_what_any_installer_says_it_installed_is_a_versions_fact(command, output, versions):
    [fact] = [c for c in Script().bash(command, output).extract() if c.kind.value == "fact"]
    assert fact.details["versions"] == versions


def test_a_sentence_in_a_file_that_names_a_version_and_an_add_installs_nothing():
    makefile = (
        "deploy: build\n"
        "\t./scripts/ship.sh $(TAG)\n"
        "# ops: the signer keeps failing on the shared runners, so for now drop `sign`\n"
        "# from the prerequisites and pass NO_SIGN=1 when shipping v3.1.0-rc2; we will add\n"
        "# the step back after the key rotation.\n"
    )
    found = Script().bash("sed -n 1,20p Makefile", makefile).extract()
    assert not [c for c in found if c.kind.value == "fact"]


def test_codex_shell_calls_with_argv_lists_are_understood():
    found = Script().tool("shell", {"command": ["bash", "-lc", "cargo test"]}, "test result: ok").extract()
    assert [c.details["command"] for c in found] == ["cargo test"]


def test_extraction_is_deterministic():
    script = Script().user("Let's use uv for installs.").bash("uv run pytest", "3 passed")
    assert script.extract() == script.extract()


def test_a_sentence_that_only_introduces_what_follows_is_not_learned():
    from cairn.pipeline.learning.person import sentences

    assert sentences("Detect the empty repo and print a friendlier note instead of the warning:") == []


@pytest.mark.parametrize(
    ("said", "read"),
    [
        (
            "`listSessions` in orchestration.ts must accept a session ID.",
            "`listSessions` in orchestration.ts must accept a session ID.",
        ),
        ("Always run `pnpm check-types`", "Always run `pnpm check-types`"),
        ("`always rebase before you push`", "always rebase before you push"),
        ("```never push to main```", "never push to main"),
    ],
)
def test_a_code_span_at_either_end_of_a_sentence_keeps_its_backticks(said, read):
    from cairn.pipeline.learning.person import sentences

    assert sentences(said) == [read]


@pytest.mark.parametrize(
    ("said", "learned"),
    [
        ("anything in next tag can be hard deprecated, maybe document this.", True),
        ("push the branch but never force-push over someone's work.", True),
        ("it never worked on my laptop anyway.", False),
    ],
)
def test_a_rule_stated_in_passing_is_a_preference(said, learned):
    from cairn.pipeline.learning.person import PREFERENCE

    assert any(p.search(said) for p in PREFERENCE) is learned


def test_a_rule_inside_a_run_on_brief_is_still_seen():
    from cairn.pipeline.learning.person import sentences

    brief = "Open a draft PR that " + "plumbs the signal through every layer and " * 8
    brief += "renders a toast; never force-push, snake_case wire / camelCase TS, add tests."
    assert any(s.startswith("never force-push") for s in sentences(brief))


def test_a_working_variant_soon_after_a_failure_is_its_fix():
    found = (
        Script()
        .bash(
            "workmux add --pr 1510 --name review-e2e -b",
            "Error: Failed to create worktree environment for branch 'fix/x'",
            error=True,
        )
        .bash("git worktree list")
        .bash("workmux add review/e2e --pr 1510 --name review-e2e -b", "Created worktree review-e2e")
        .fixes()
    )
    [episode] = [c for c in found if c.kind.value == "episode"]
    [fix] = [c for c in found if c.kind.value == "procedure"]
    assert episode.details["outcome"] == "fixed"
    assert fix.content.endswith("run `workmux add review/e2e --pr 1510 --name review-e2e -b` instead")
    assert "then `workmux add --pr 1510" not in fix.content


@pytest.mark.parametrize(
    ("failed", "later", "shown"),
    [
        # the wrapper dropped; shown as a reader would type it again, in their own checkout
        ("cd /repo && rtk bun run test 2>&1", "cd /repo && bun run test 2>&1", "bun run test"),
        ("pytest -q tests/", "uv run pytest -q tests/", "uv run pytest -q tests/"),  # a wrapper added
    ],
)
def test_the_same_command_through_another_wrapper_is_a_working_variant(failed, later, shown):
    found = Script().bash(failed, "error: unrecognized subcommand", error=True).bash(later, "ok").fixes()
    [fix] = [c for c in found if c.kind.value == "procedure"]
    assert fix.content.endswith(f"run `{shown}` instead")
    assert fix.details["command"] == failed  # what ran, for matching later runs of it


def test_the_same_action_on_the_same_target_by_another_tool_is_a_working_variant():
    found = (
        Script()
        .bash(
            "workmux remove wt-1 -f --keep-branch", "Error: Some worktrees could not be removed", error=True
        )
        .bash("git worktree list --porcelain", "worktree /repo__worktrees/wt-1")  # a look, not a step
        .bash("git worktree remove /repo__worktrees/wt-1", "")
        .fixes()
    )
    [fix] = [c for c in found if c.kind.value == "procedure"]
    assert fix.content.endswith(": run `git worktree remove /repo__worktrees/wt-1` instead")


@pytest.mark.parametrize(
    ("failed", "later"),
    [
        ("rtk make", "make"),
        ("make test", "go test ./..."),  # the same verb, but no target to tell it is the same action
        (
            "workmux remove main -f",
            "git worktree remove ../trees/feature-x",
        ),  # another target  # one word left: too little to call it the same command
        ("go test ./...", "go test ./pkg/..."),  # a narrower run leaves the full one failing
        ("workmux remove main -f", "workmux remove feature-x -f"),  # another target
        ("npm run build", "npm run lint"),  # another script
        ("go build ./go/cmd/server/", "go build ./cmd/server/"),  # no move: another folder's package
    ],
)
def test_a_different_command_on_other_names_is_no_variant(failed, later):
    found = Script().bash(failed, "Error: boom", error=True).bash(later, "ok").fixes()
    assert not found


def test_a_variant_long_after_the_failure_answers_nothing():
    script = Script().bash("make deploy ENV=prod", "Error: denied", error=True)
    for i in range(8):
        script.bash(f"echo step {i} && make step{i}")
    assert not script.bash("make deploy ENV=prod --force", "deployed").fixes()


@pytest.mark.parametrize(
    ("command", "looks"),
    [
        ("git worktree list --porcelain", True),  # git's own read verbs past its known probes
        ("git stash list", True),
        ("tmux list-windows -a | rg agentv || true", True),  # a compound subcommand led by a read verb
        ("kubectl get pods", True),
        ("git worktree remove ../trees/x", False),
        ("git stash pop", False),
        ("npm install list-it", False),  # a later name is no verb
        ("tmux kill-window -t agentv:4", False),
    ],
)
def test_a_look_around_is_told_by_its_read_only_verb(command, looks):
    from cairn.pipeline.reading.commands import is_probe

    assert is_probe(command) is looks


@pytest.mark.parametrize(
    ("ran", "shown"),
    [
        ("cd /Users/me/Code/app && rtk bun run test 2>&1", "rtk bun run test"),
        ("bun run lint 2>&1 && bun run test 2>&1 | tail -3", "bun run lint && bun run test"),
        ("go test ./... 2>&1 | tail -n 20; echo done", "go test ./...; echo done"),
        ("make lint 2>/dev/null", "make lint"),
        ("cd web && bun test", "cd web && bun test"),  # where it ran, inside the repo, is part of it
        ("git log --oneline | grep fix", "git log --oneline | grep fix"),  # a filter is what ran
        ("cd /srv/app", "cd /srv/app"),
    ],
)
def test_a_command_is_shown_as_a_reader_would_run_it_again(ran, shown):
    assert shown_command(ran) == shown


@pytest.mark.parametrize(
    ("ran", "brief"),
    [
        ("go test ./...", "go test ./..."),  # short: as shown
        (
            "bun test packages/core/test/loaders/config-loader.test.ts packages/core/test/projects.test.ts",
            "bun test …/config-loader.test.ts …/projects.test.ts",
        ),
        (
            "cd /home/me/app && workmux add --pr 1510 --name review-e2e --target-name review-e2e"
            " -b -P prompts/x.md --yes",
            "workmux add --pr 1510 --name review-e2e --target-name review-e2e -b -P …",
        ),
    ],
)
def test_a_long_command_is_named_briefly_by_its_file_names_then_cut_at_a_word(ran, brief):
    from cairn.pipeline.reading.shell import brief_command

    assert brief_command(ran) == brief


def test_a_fix_names_a_long_failing_command_briefly_and_keeps_it_whole_in_its_details():
    failing = "bun test packages/core/test/loaders/config-loader.test.ts packages/core/test/validator.test.ts"
    found = (
        Script()
        .bash(failing, "error: expect(received).toContain(expected)", error=True)
        .tool("Edit", {"file_path": "/home/me/app/packages/core/test/a.test.ts"}, "ok")
        .bash(failing, "2 pass")
        .fixes()
    )
    [fix] = [c for c in found if c.kind.value == "procedure"]
    assert fix.content.startswith("When `bun test …/config-loader.test.ts …/validator.test.ts` fails")
    assert fix.details["command"] == failing


def test_a_fix_names_the_files_it_edited_as_paths_in_the_checkout():
    from cairn.pipeline.reading.shell import checkouts

    script = (
        Script()
        .bash("make test", "FAIL: TestParse", error=True)
        .tool("Edit", {"file_path": "/home/me/app/internal/parse.go"}, "ok")
        .tool("Edit", {"file_path": "/home/me/app__worktrees/fix-1/internal/lex.go"}, "ok")
        .tool("Edit", {"file_path": "/tmp/scratch/notes.md"}, "ok")
        .tool("Edit", {"file_path": "/home/me/trees/fix-2/go.mod"}, "ok")
        .bash("make test", "ok")
    )
    script.bash("cd /home/me/trees/fix-2 && git status", "clean")
    script.tool("exec_command", {"cmd": "git status", "workdir": "/home/me/app__worktrees/fix-1"}, "clean")
    script.tool("exec_command", {"cmd": "ls", "workdir": "/tmp/scratch"}, "notes.md")
    roots = checkouts(script.events, "/home/me/app")
    [fix] = [
        c
        for c in errors_and_fixes(script.events, shell_calls(script.events), roots)
        if c.kind.value == "procedure"
    ]
    # the main checkout and a worktree beside it are checkouts; a scratch folder elsewhere is not
    # (`cd /abs && …` into a folder beside the checkout names one too)
    assert (
        "edit internal/parse.go; edit internal/lex.go; edit /tmp/scratch/notes.md; edit go.mod" in fix.content
    )


def test_a_fix_by_an_edit_says_what_the_last_edit_of_the_file_put_in():
    patch = (
        "*** Begin Patch\n*** Update File: /w/app/test/validator.test.ts\n@@\n"
        "-    expect(error?.message).toContain('no longer supported');\n"
        "+    expect(error?.message).toContain('uses removed value');\n*** End Patch\n"
    )
    found = (
        Script()
        .bash("bun test test/validator.test.ts", "error: expect(received).toContain(expected)", error=True)
        .tool("Edit", {"file_path": "/w/app/src/a.ts", "old_string": "x\ny", "new_string": "x\ny\nz()"}, "ok")
        .tool(
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: /w/app/test/validator.test.ts\n+a"},
            "ok",
        )
        .tool("apply_patch", {"input": patch}, "ok")
        .bash("bun test test/validator.test.ts", "1 pass")
        .fixes()
    )
    [fix] = [c for c in found if "fixes_error" in c.details]
    # the lines an edit kept are not what it changed; a file edited twice is named once, by its last edit
    assert fix.details["steps"][:2] == [
        "edit /w/app/src/a.ts (`z()`)",
        "edit /w/app/test/validator.test.ts (`expect(error?.message).toContain('uses removed value');`)",
    ]


@pytest.mark.parametrize(
    "said",
    [
        # Claude Code: the person quotes a tool description they want hidden from the replies
        'Can you hide the text from the replies? \n\n"IMPORTANT: When reporting radiation values in CPM, '
        "always state 'CPM (counts per minute)', NOT 'CPS'. CPM is the standard unit.\"\n\nBut the hint "
        "should still be there for the bot.",
        # Codex, an Elixir project: an error's advice pasted as a block quote
        "mix fails again:\n> warning: always use Logger.warning/2 instead of Logger.warn/2\nwhat now",
        "The reply said \u201cyou should never commit the _build folder, it is always regenerated\u201d,"
        " is that so",
    ],
)
def test_a_passage_the_person_quotes_is_not_their_preference(said):
    preferences = [c.content for c in Script().user(said).extract() if c.kind.value == "preference"]
    # what they say of it in their own words may be a rule ("But the hint should still be there")
    assert not [p for p in preferences if "always" in p or "never" in p], preferences


@pytest.mark.parametrize(
    "said",
    [
        "The icons must be pngs",
        "Tool calls should not directly follow the user's message.",
        "Also do not apply linting for the tests",
        "Lembrando que o app tem que estar buildando e com testes para esses cenários.",
        "O app iOS deve usar a API como único canal para conexões.",
        "Lembrando que todas as features vão estar atrás de uma remote config.",
        "La clave de la API no debe quedar expuesta a todos los usuarios.",
        "Die WAL-Dateien müssen vor dem Herunterfahren gelöscht werden.",
        "کلید API نباید در لاگ\u200cها نوشته شود.",  # Persian: "must not", one word
        "A teszteknek zöldnek kell lenniük merge előtt.",
        "Tootmisandmebaasi ei tohi käsitsi muuta.",
        "Do systému nesmiete nič inštalovať cez sudo.",
        "Kata laluan mesti disimpan dalam vault sahaja.",
        "배포 전에 테스트를 통과해야 합니다.",  # Korean: "must" closes the verb it follows
        "When clicked, the details panel should load the selected session with no fallback to another one",
    ],
)
def test_an_obligation_the_person_states_in_their_language_is_a_preference(said):
    assert [c.kind.value for c in Script().user(said).extract()] == ["preference"]


@pytest.mark.parametrize(
    "said",
    [
        "Vi kör alltid migreringar via verktyget, aldrig manuellt i produktion.",
        "We committen nooit rechtstreeks op de main-branch.",
        "Nigdy nie wrzucamy kluczy API do repozytorium.",
        "Секреты никогда не храним в репозитории.",
        "Kullanıcı verilerini asla loglara yazmıyoruz.",
        "本番データベースには直接接続しないでください。",
        "生产环境的配置文件不要手动修改。",
        "O deploy sempre sai da branch main.",
        "لا نضع كلمات المرور في الكود أبداً.",
        "Δεν κάνουμε ποτέ push απευθείας στο main.",
        "رمزها را هیچ\u200cوقت در مخزن نمی\u200cگذاریم.",  # Persian's everyday "never", joined by a ZWNJ
        "ང་ཚོས་ནམ་ཡང་ཐོན་སྐྱེད་གཞི་གྲངས་མཛོད་ལག་པས་བཟོ་བཅོས་མི་བྱེད།",  # Tibetan: no space between words
        "हम हमेशा main ब्रांच पर सीधे push करने से बचते हैं।",  # Hindi: its "always" ends in a vowel sign
        "Nu facem niciodată push direct pe main.",
        "Soha ne commitolj jelszót a repóba.",
        "Älä koskaan pushaa suoraan main-haaraan.",
        "Nekad neievieto paroles repozitorijā.",
        "Niekada nedėk slaptažodžių į repozitoriją.",
        "Nikada ne pushaj izravno na main granu.",
        "Никога не пушвай директно в main.",
        "Við ýtum aldrei beint á main greinina.",
        "Kamwe usiweke nenosiri kwenye git.",
        "main тармағына ешқашан force push жасама.",
        "Heç vaxt birbaşa main budağına push etmə.",
        "პაროლები არასდროს ჩაწერო რეპოზიტორიაში.",
        "የይለፍ ቃሎችን በፍጹም ወደ ማከማቻው አታስገባ።",
        "পাসওয়ার্ড কখনোই রিপোজিটরিতে রাখবে না।",
        "கடவுச்சொற்களை ஒருபோதும் களஞ்சியத்தில் சேர்க்கக் கூடாது.",
        "စကားဝှက်များကို repository ထဲသို့ ဘယ်တော့မှ မထည့်ပါနှင့်။",  # Burmese: no space between words
        "main 브랜치에 직접 푸시하지 마세요.",  # Korean: the negative order is a word of its own
        "API कुंजी को कभी नहीं लॉग में लिखना।",
    ],
)
def test_always_and_never_in_the_person_s_language_state_a_rule(said):
    found = Script().user(said).extract()
    assert [c.kind.value for c in found] == ["preference"] and not found[0].tags


@pytest.mark.parametrize(
    "said",
    [
        "Around here nobody merges their own pull request.",
        "No one edits the generated client by hand.",
        "Bij ons zet niemand secrets in de CI-config.",
        "Aquí nadie despliega los viernes.",
        "Aqui ninguém faz deploy direto em produção.",
        "Personne ne modifie le schéma sans migration.",
        "U nas nikt nie commituje do gałęzi release.",
        "У нас никто не правит прод руками.",
        "Burada kimse main dalına doğrudan push yapmaz.",
        "이 저장소에는 아무도 직접 푸시하지 않습니다.",
        "本番には誰も直接デプロイしません。",
    ],
)
def test_what_nobody_here_does_in_the_person_s_language_states_a_rule(said):
    found = Script().user(said).extract()
    assert [c.kind.value for c in found] == ["preference"] and not found[0].tags


@pytest.mark.parametrize(
    "said",
    [
        "हम रिलीज़ ब्रांच पर कभी भी हाथ से टैग नहीं बनाते।",
        "इस रिपॉज़िटरी में कोई भी सीक्रेट कोड में नहीं रखा जाएगा।",
        "یہاں کوئی بھی مائیگریشن ہاتھ سے پروڈکشن پر نہیں چلائی جاتی۔",
        "ہم کبھی بھی لاک فائل دستی طور پر تبدیل نہیں کرتے۔",
        "আমরা কখনো রিলিজ ব্রাঞ্চে সরাসরি কমিট করি না।",
        "এখানে কোনো টোকেন লগে লেখা হয় না।",
    ],
)
def test_never_and_none_with_the_clause_s_own_negation_at_its_end_state_a_rule(said):
    # Hindi, Urdu and Bengali close the clause with its negation, after the object
    found = Script().user(said).extract()
    assert [c.kind.value for c in found] == ["preference"] and not found[0].tags


@pytest.mark.parametrize("said", ["कोई बात नहीं, मैं देख लूँगा।", "کوئی بات نہیں، میں دیکھ لوں گا۔"])
def test_no_matter_is_no_rule(said):
    assert [c for c in Script().user(said).extract() if c.kind.value == "preference"] == []


def test_a_person_is_not_the_french_no_one():
    assert [c for c in Script().user("La personne qui gère le CI est absente.").extract()] == []


@pytest.mark.parametrize(
    "said",
    [
        "Es funktioniert immer noch nicht nach dem Update.",
        "Nie wiem, czy ten test działa poprawnie.",
        # a word another language spells alike: Portuguese "ala" (a wing), "mora" (lives), Thai "อย่าง"
        "A ala de cima do prédio está sem luz.",
        "O cálculo do frete mora no módulo de pagamentos.",
        "ตอนนี้ระบบทำงานได้อย่างปกติแล้ว",
    ],
)
def test_still_is_no_always_and_a_plain_not_is_no_never(said):
    assert [c for c in Script().user(said).extract() if c.kind.value == "preference"] == []


@pytest.mark.parametrize(
    "said",
    [
        "It must have been changes of the last 2 days.",
        "Maybe we should make a sub domain for it.",
        "Analyse which directories should be added to the exclusion paths.",
        "Should the linter run over the tests?",
        "Should we run the linter over the tests",
        "When should the linter run",
        "Student calls POST /api/trainers/7/connect → should return 201",
        "`entire enable` — should succeed with a warning about no commits",
        "Testar com usuário free e pro — ambos devem ver trainers",
        "Do not update the VPS yet.",
        "I don't know why the build fails.",
    ],
)
def test_a_guess_a_hedge_a_question_or_a_test_step_is_no_preference(said):
    assert [c for c in Script().user(said).extract() if c.kind.value == "preference"] == []


def test_a_choice_stated_as_an_obligation_stays_a_decision():
    found = Script().user("All commands should run in the terminal instead of through node.").extract()
    assert [c.kind.value for c in found] == ["decision"]


def test_a_sentence_pasted_many_times_in_one_message_is_console_output_not_a_rule():
    # Claude Code: the person pastes the browser console, one React warning per tree node
    warning = "Warning: Encountered two children with the same key. Keys should be unique so that it works."
    said = "Seems to work but I've plenty of warnings in the console: " + "\n    at div\n".join([warning] * 5)
    assert [c for c in Script().user(said).extract() if c.kind.value == "preference"] == []


def test_a_rule_inside_a_long_brief_without_clause_marks_is_read_clause_by_clause():
    brief = (
        "Preciso criar o fluxo para essa nova feature, "
        + "com todos os critérios de aceite, " * 8
        + "lembrando que todas as features vão estar em volta de uma remote config, crie uma nova branch."
    )
    found = [c.content for c in Script().user(brief).extract() if c.kind.value == "preference"]
    assert found == ["Lembrando que todas as features vão estar em volta de uma remote config"]


def test_a_short_quoted_word_stays_part_of_the_persons_rule():
    found = Script().user('Please always use the "main" branch for releases.').extract()
    assert kinds(found) == [("preference", 'Please always use the "main" branch for releases.')]


def test_a_value_in_another_chats_answer_the_person_pasted_is_not_their_fact():
    # Claude Code: the person pastes what another assistant replied, below their own question
    pasted = (
        "Still reporting CPS instead of CPM?\n\n  I found a more recent reading from the same sensor:\n\n"
        "  Location: Yokohama (35.476N, 139.572E)\n  Current Radiation Level: 28.39 CPS\n\n"
        "  Assessment:\n\n  The reading of 28.39 CPS converts to approximately 0.08 uSv/h, which is within"
        " normal background\n  radiation range for this location.\n\n"
        "  ---\n  This data was retrieved by an AI.\n"
    )
    # Gemini CLI, a Java project: the person's own opening states the fact, the paste follows
    own = "The build server is at 10.1.2.3 now.\n\nHere is the log:\n\n" + "".join(
        f"[INFO] step {n} uses 10.9.9.{n} for the cache\n" for n in range(9)
    )

    assert [c for c in Script().user(pasted).extract() if c.kind.value == "fact"] == []
    assert [c.content for c in Script().user(own).extract() if c.kind.value == "fact"] == [
        "The build server is at 10.1.2.3 now."
    ]


@pytest.mark.parametrize(
    ("command", "looks"),
    [
        ('ssh root@simplemap.safecast.org "ls -la /etc/apache2/sites-enabled/"', True),
        ('ssh root@65.108.24.131 "systemctl status safecast-mcp --no-pager"', True),
        ("ssh -i ~/.ssh/deploy -p 2222 deploy@app.internal 'cat /srv/app/config/prod.exs'", True),
        ('ssh root@65.108.24.131 "systemctl restart safecast-mcp"', False),
        ('ssh root@web "ln -sf /etc/nginx/sites-available/app /etc/nginx/sites-enabled/ && nginx -t"', False),
        ("ssh deploy@app.internal", False),  # a shell there: no command to judge
    ],
)
def test_a_look_around_on_another_machine_is_a_look_around(command, looks):
    from cairn.pipeline.reading.commands import is_probe

    assert is_probe(command) is looks


@pytest.mark.parametrize(
    "declined",
    [
        # Claude Code, as a Safecast session's transcript has it
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
        "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
        "user to tell you how to proceed.",
        "exec command rejected by user",  # Codex
        "The user rejected permission to use this specific tool call.",  # OpenCode
        "[Operation Cancelled] Reason: Operation cancelled",  # Gemini CLI, a session-bridge session's call
    ],
)
def test_a_command_the_person_declined_to_run_is_no_failure_left_unresolved(declined):
    from cairn.pipeline.reading.failures import unresolved_errors

    calls = shell_calls(Script().bash('ssh deploy@web "mix ecto.migrate"', declined, error=True).events)
    assert unresolved_errors(calls) == []
    real = shell_calls(
        Script().bash("mix ecto.migrate", "** (Postgrex.Error) permission denied", error=True).events
    )
    assert [u["command"] for u in unresolved_errors(real)] == ["mix ecto.migrate"]


@pytest.mark.parametrize(
    ("said", "rule"),
    [
        (
            "We never log raw request bodies or customer emails. Logs get the request ID, route and status "
            "code, nothing more.",
            "Logs get the request ID, route and status code",
        ),
        (
            "De databasepoort gaat nooit open naar buiten. Postgres luistert alleen op localhost, ook op de "
            "dev-VM.",
            "Postgres luistert alleen op localhost",
        ),
    ],
)
def test_a_short_rule_message_the_agent_took_in_keeps_what_its_line_says_after_the_rule(said, rule):
    (found,) = Script().user(said).assistant("Understood.").extract()
    assert found.kind.value == "preference" and rule in found.content


def test_what_follows_a_rule_in_a_message_the_agent_acted_on_stays_out_of_it():
    # the agent went to work: the message asked for it, and what follows the rule is that work
    said = "Never push to main. Fix the login bug in the auth module now."
    found = Script().user(said).bash("git status", "clean").assistant("Fixed.").extract()
    assert [c.content for c in found if c.kind.value == "preference"] == ["Never push to main."]


@pytest.mark.parametrize(
    "said",
    [
        "Never push to main. Can you look at the failing job?",  # a question
        "Never push to main.\nThe staging deploy broke last night after the merge.",  # another line
    ],
)
def test_a_question_or_another_line_after_a_rule_stays_out_of_it(said):
    found = [c for c in Script().user(said).assistant("Noted.").extract() if c.kind.value == "preference"]
    assert [c.content for c in found] == ["Never push to main."]


def test_german_nie_is_never_where_the_sentence_is_german_and_a_plain_not_elsewhere():
    said = "Migrationen laufen bei uns nie direkt gegen die Produktiv-DB, nur über die Deploy-Pipeline."
    (found,) = Script().user(said).extract()
    assert found.kind.value == "preference" and not found.tags
    for plain_not in ("Nie wiem, czy ten test przechodzi na produkcji.", "Ek het nie die lêer verander nie."):
        assert [c for c in Script().user(plain_not).extract() if c.kind.value == "preference"] == []


@pytest.mark.parametrize(
    ("said", "rule"),
    [
        ("The staging database is only reachable through the VPN, on purpose.", "only reachable through"),
        ("Τα logs κρατάμε μόνο για 14 ημέρες, λόγω GDPR.", "μόνο για 14 ημέρες"),
        ("Kod nas se build pravi samo na CI mašini, nikad lokalno za release.", "samo na CI"),
        (
            "Бэкапы храним только в другом регионе — так решили после пожара в ЦОДе.",
            "только в другом регионе",
        ),
        ("Feature flags get an owner and a removal date in every pull request that adds one.", "every pull"),
        ("Kila tawi la release linapewa tag kabla ya kupelekwa.", "Kila tawi"),
        ("Session recordings stay inside the EU region; the DPA says so.", "stay inside the EU"),
        ("Os segredos do app ficam no Keychain do aparelho.", "ficam no Keychain"),
        ("Die Preise bleiben in Cent als Ganzzahl gespeichert.", "bleiben in Cent"),
        ("Ключи шифрования остаются в HSM банка.", "остаются в HSM"),
    ],
)
def test_a_restriction_the_agent_took_in_without_acting_is_a_rule(said, rule):
    found = Script().user(said).assistant("Understood.").extract()
    assert [rule in c.content for c in found if c.kind.value == "preference"] == [True]


def test_danish_kun_is_only_where_the_sentence_is_danish_and_finnish_kun_is_when():
    danish = Script().user("Vi deployer kun fra CI-serveren.").assistant("Forstået.").extract()
    assert [c.kind.value for c in danish] == ["preference"]
    finnish = Script().user("Kun deploy epäonnistuu, katson lokit itse.").assistant("Selvä.").extract()
    assert [c for c in finnish if c.kind.value == "preference"] == []


def test_what_stays_as_it_is_in_a_message_the_agent_acted_on_is_no_rule():
    said = "The retry button stays grey after a failed upload, fix it."
    found = Script().user(said).bash("npm test", "ok").assistant("Fixed the state reset.").extract()
    assert [c for c in found if c.kind.value == "preference"] == []


def test_only_in_a_commands_flag_is_no_restriction():
    said = "Done, I ran firebase deploy --only functions:sendChat from my machine."
    assert [
        c for c in Script().user(said).assistant("Great.").extract() if c.kind.value == "preference"
    ] == []


def test_a_restriction_in_a_message_the_agent_acted_on_scopes_the_task_and_is_no_rule():
    said = "Fix only the critical issues in the report."
    found = Script().user(said).bash("go test ./...", "ok").assistant("Fixed the two.").extract()
    assert [c for c in found if c.kind.value == "preference"] == []


def test_a_rule_sentence_that_a_rule_before_it_carries_is_not_stated_twice():
    said = "Releases never go out from a laptop. They are only cut by the CI job from a signed tag."
    found = [c for c in Script().user(said).assistant("Noted.").extract() if c.kind.value == "preference"]
    assert [c.content for c in found] == [said]


def test_a_choice_after_a_rule_the_agent_took_in_is_a_decision_of_its_own():
    said = "Please always use pnpm in this repository. We decided to go with PostgreSQL 16 for orders."
    found = Script().user(said).assistant("Noted.").extract()
    assert [(c.kind.value, c.content) for c in found] == [
        ("preference", "Please always use pnpm in this repository."),
        ("decision", "We decided to go with PostgreSQL 16 for orders."),
    ]

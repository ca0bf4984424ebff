"""Transcript steps: a session rendered as compact, cited excerpts (pipeline.steps)."""

from __future__ import annotations

import pytest
from cairn.pipeline.models import EventDoc
from cairn.pipeline.reading.steps import build_excerpts, documented_names, informative, render_event
from cairn.search.snippets import starts_message
from cairn.transcripts.model import Role

pytestmark = pytest.mark.unit


def ev(seq, line, role, text="", **kw) -> EventDoc:
    return EventDoc(seq=seq, line_no=line, role=role, text=text, **kw)


def shell(seq, line, command, call_id, description=None) -> EventDoc:
    args = {"command": command, **({"description": description} if description else {})}
    return ev(seq, line, Role.TOOL_CALL, tool_name="Bash", tool_input=args, tool_call_id=call_id)


def result(seq, line, text, call_id, error=False) -> EventDoc:
    return ev(seq, line, Role.TOOL_RESULT, text, tool_call_id=call_id, is_error=error)


def test_a_step_shows_the_request_each_command_with_its_outcome_and_the_files_touched():
    events = [
        ev(0, 1, Role.USER, "Make the empty-repo check return a clear error"),
        shell(1, 2, "go test ./cmd/...", "t1", "Run the unit tests"),
        result(2, 3, "--- FAIL: TestEmptyRepo\nFAIL\nexit status 1", "t1", error=True),
        ev(
            3,
            4,
            Role.TOOL_CALL,
            tool_name="Edit",
            tool_input={
                "file_path": "cmd/strategy.go",
                "new_string": "var ErrEmptyRepository = errors.New(...)",
            },
            tool_call_id="t2",
        ),
        result(4, 5, "The file cmd/strategy.go has been updated successfully.", "t2"),
        ev(5, 6, Role.ASSISTANT, "The tests pass now."),
        ev(6, 7, Role.USER, "Thanks, now open a PR"),
    ]
    first, second = build_excerpts(events)
    assert (first.line_start, first.line_end) == (1, 6)
    assert first.request == "Make the empty-repo check return a clear error"
    assert "user: Make the empty-repo check" in first.text
    assert "$ go test ./cmd/...   # Run the unit tests" in first.text
    assert "→ exit 1" in first.text and "--- FAIL: TestEmptyRepo" in first.text
    assert "edit cmd/strategy.go: var ErrEmptyRepository" in first.text
    assert "agent: The tests pass now." in first.text
    assert second.text == "user: Thanks, now open a PR" and second.line_start == 7


def test_a_long_step_is_cut_into_bounded_excerpts_that_each_name_their_request_in_the_title_only():
    events = [ev(0, 1, Role.USER, "Tidy every module")]
    for i in range(40):
        events.append(shell(2 * i + 1, 2 * i + 2, f"ruff format module_{i}.py", f"c{i}"))
        events.append(result(2 * i + 2, 2 * i + 3, "1 file reformatted " + "x" * 100, f"c{i}"))
    excerpts = build_excerpts(events, max_chars=600)
    assert len(excerpts) > 3
    assert all(len(x.text) <= 600 for x in excerpts)
    assert all(x.request == "Tidy every module" for x in excerpts)
    # the request is the excerpt's title; repeated in every text it would make each match the request
    assert not any("Tidy every module" in x.text for x in excerpts[1:])
    assert [x.index for x in excerpts] == list(range(len(excerpts)))


def test_a_step_with_nothing_but_redaction_placeholders_leaves_no_excerpt():
    events = [
        ev(0, 1, Role.USER, "[REDACTED_TEXT len=98 sha=62d744dd]"),
        ev(1, 2, Role.ASSISTANT, "[REDACTED_TEXT len=12 sha=00000000]"),
    ]
    assert build_excerpts(events) == []


def test_a_tools_text_of_few_or_short_words_is_shown_and_only_a_redacted_one_is_not():
    events = [
        ev(0, 1, Role.USER, "Count the open tickets and read the vendored note"),
        shell(1, 2, "ls", "c1"),
        result(2, 3, "42", "c1"),
        ev(
            3, 4, Role.TOOL_CALL, tool_name="Read", tool_input={"file_path": "/opt/x/NOTE"}, tool_call_id="c2"
        ),
        result(4, 5, "N O T A :\nd o n ' t   p u s h   (ref 9)", "c2"),
        shell(5, 6, "cat .env", "c3"),
        result(6, 7, "[REDACTED_SECRET len=40 sha=1a2b3c4d]", "c3"),
    ]
    [excerpt] = build_excerpts(events)
    # a command's, or a file's, text with no word of three letters is still what the tool said
    assert "$ ls\n  → ok: 42" in excerpt.text
    assert "→ ok: N O T A :\n    d o n ' t p u s h (ref 9)" in excerpt.text  # its runs of spaces as one
    assert "$ cat .env\n  → ok" in excerpt.text and "REDACTED" not in excerpt.text


def test_a_pages_numeric_character_references_are_kept_as_the_letters_they_are():
    page = "".join(f"&#x{ord(c):x};" for c in "Copy this code into the product") + " (ref 9) &#0;"
    events = [
        ev(0, 1, Role.USER, "Read the guide"),
        ev(
            1,
            2,
            Role.TOOL_CALL,
            tool_name="WebFetch",
            tool_input={"url": "https://x.invalid"},
            tool_call_id="w",
        ),
        result(2, 3, page, "w"),
    ]
    [excerpt] = build_excerpts(events)
    assert "→ ok: Copy this code into the product (ref 9) &#0;" in excerpt.text


def test_a_harness_notes_numeric_character_references_are_kept_as_the_letters_they_are():
    page = "".join(f"&#x{ord(c):x};" for c in "Copy this code into the product") + " (ref 9)"
    note = f"<user_shell_command>\n<command>curl https://x.invalid</command>\n<result>{page}</result>"
    events = [ev(0, 1, Role.USER, "Read the guide"), ev(1, 2, Role.SYSTEM, note)]
    [excerpt] = build_excerpts(events)
    assert "Copy this code into the product (ref 9)" in excerpt.text


@pytest.mark.parametrize(
    ("request_text", "reply"),
    [
        ("Почини вход для старых пользователей.", "Пароли теперь хешируются при каждом входе."),  # Russian
        ("مشکل ورود کاربران قدیمی را برطرف کن.", "رمزها اکنون در هر ورود هش می‌شوند."),  # Persian
        ("修复老用户的登录问题。", "现在每次登录都会对密码进行哈希。"),  # Chinese, no spaces
    ],
)
def test_a_step_in_a_script_other_than_latin_is_an_excerpt_like_any_other(request_text, reply):
    events = [ev(1, 1, Role.USER, request_text), ev(2, 2, Role.ASSISTANT, reply)]
    [excerpt] = build_excerpts(events)
    assert excerpt.text == f"user: {request_text}\nagent: {reply}"


def test_long_output_keeps_its_head_its_error_lines_and_its_tail():
    lines = [f"line {i} ok" for i in range(200)]
    lines[120] = "src/app.ts:12:3 error TS2307: Cannot find module './AgentLogos'"
    shown = informative("\n".join(lines), 480)
    assert "line 0 ok" in shown and "line 199 ok" in shown
    assert "error TS2307" in shown
    assert len(shown) <= 480


def test_long_output_keeps_the_status_of_each_step_a_runner_reports_failures_first():
    # `gh run view` of a deploy: which step failed and which passed is what a later session asks
    run = (
        ["X main Build and Deploy · 22489371573", "Triggered via push about 3 minutes ago", "JOBS"]
        + ["X deploy in 1m27s (ID 65147154977)", "  ✓ Set up job", "  ✓ Checkout", "  ✓ Set up Go"]
        + ["  ✓ Build", "  ✓ Deploy to Map Server", "  ✓ Health check (api)", "  X Health check (web)"]
        + ["  - Post Set up Go", "  ✓ Post Checkout", "  ✓ Complete job", "ANNOTATIONS"]
        + [f"  log line {i} of the runner's own chatter" for i in range(20)]
        + ["deploy: .github#33", "To see what failed, try: gh run view --log-failed", "View this run"]
    )
    shown = informative("\n".join(run), 480)
    assert "X Health check (web)" in shown and "✓ Health check (api)" in shown
    assert "log line 3" not in shown and "View this run" in shown and len(shown) <= 480
    # a test runner's verdicts read the same way, in any language
    tests = [f"test tests::case_{i} ... ok" for i in range(60)]
    tests[41] = "test tests::parses_unicode_paths ... FAILED"
    shown = informative("running 60 tests\n" + "\n".join(tests) + "\n\ntest result: FAILED.", 480)
    assert "parses_unicode_paths ... FAILED" in shown and len(shown) <= 480


GO_FILE = (
    """package strategy

import "os"

// waitForTranscriptFlush polls until the agent has flushed the transcript:
// the stop hook fires before it is fully written.
func waitForTranscriptFlush(path string) error {
"""
    + "\n".join(f"\tstep{i}()" for i in range(60))
    + """
}

func undocumented() {}
"""
)


def test_a_file_read_whole_keeps_what_its_comments_say_each_declared_name_is_for():
    call = ev(0, 1, Role.TOOL_CALL, tool_name="Read", tool_input={"file_path": "hooks.go"}, tool_call_id="r")
    text = render_event(call, result(1, 2, GO_FILE, "r"))
    assert "defines: waitForTranscriptFlush — waitForTranscriptFlush polls until the agent" in text
    assert "undocumented" not in text.split("defines:")[1]


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("# Parse a manifest.\ndef parse(text):", "parse"),
        ("/** Build the tree. */\nexport function buildTree(files) {", "buildTree"),
        ('/// The sessions folder.\npub const SESSIONS: &str = ".git/s";', "SESSIONS"),
        ("-- Sums the ledger.\ndefp total(rows) do", "total"),
    ],
)
def test_a_documented_declaration_is_found_in_any_language(source, name):
    assert documented_names(source).startswith(f"defines: {name} — ")


def test_a_codex_exit_status_is_read_from_its_output_header():
    call = ev(
        0,
        1,
        Role.TOOL_CALL,
        tool_name="exec_command",
        tool_input={"cmd": "git fetch origin"},
        tool_call_id="x",
    )
    out = result(
        1, 2, "Chunk ID: 1\nWall time: 0.3 seconds\nProcess exited with code 128\nOutput:\nfatal: repo", "x"
    )
    text = render_event(call, out)
    assert text.startswith("$ git fetch origin")
    assert "→ exit 128: fatal: repo" in text
    assert "Chunk ID" not in text


def test_a_long_request_is_never_cut_it_continues_over_several_excerpts():
    plan = "\n".join(f"- step {i}: change module_{i} so that it handles the empty case" for i in range(120))
    plan += "\n- No attempt to fully support empty repos (too many downstream HEAD dependencies)"
    excerpts = build_excerpts([ev(1, 1, Role.USER, "Implement the following plan:\n" + plan)])
    joined = "\n".join(x.text for x in excerpts)
    assert len(excerpts) > 2 and all(len(x.text) <= 1_800 for x in excerpts)
    assert "too many downstream HEAD dependencies" in joined and "module_119" in joined
    assert all(x.request.startswith("Implement the following plan") for x in excerpts)


def test_a_sub_agents_work_is_its_own_step_and_the_main_thread_resumes_its_request():
    events = [
        ev(1, 1, Role.USER, "Find where retries are configured and raise the limit"),
        ev(2, 2, Role.USER, "Search the repo for retry settings", is_sidechain=True),
        ev(3, 3, Role.ASSISTANT, "Retries live in config/retry_policy.toml", is_sidechain=True),
        ev(4, 4, Role.ASSISTANT, "Raising max_retries to 8 in config/retry_policy.toml"),
    ]
    first, sub, resumed = build_excerpts(events)
    assert sub.sidechain and sub.request == "Search the repo for retry settings"
    assert "config/retry_policy.toml" in sub.text and "config/retry_policy.toml" not in first.text
    assert resumed.request == first.request and "max_retries to 8" in resumed.text


def test_a_new_file_copilot_cli_creates_is_an_edit_with_what_it_wrote():
    call = ev(
        0,
        1,
        Role.TOOL_CALL,
        tool_name="create",
        tool_input={"path": "src/retry.py", "file_text": "def retry(fn):\n    return fn"},
        tool_call_id="c",
    )
    assert render_event(call, result(1, 2, "Created file src/retry.py", "c")) == (
        "edit src/retry.py: def retry(fn): return fn"
    )


def test_a_file_read_whole_keeps_the_explanations_its_comments_give_inside_functions_too():
    body = "\n".join(f"\tstep{i}()" for i in range(80))
    source = (
        "package cli\n\nfunc handleStop() error {\n"
        + body
        + "\n\t// The stop hook fires before the transcript is fully written to disk,\n"
        "\t// so we poll for our own sentinel entry in the file tail.\n"
        "\twaitForTranscriptFlush(path, time.Now())\n"
        "\t// ok\n\tdone()\n}\n"
    )
    call = ev(0, 1, Role.TOOL_CALL, tool_name="Read", tool_input={"file_path": "h.go"}, tool_call_id="r")
    text = render_event(call, result(1, 2, source, "r"))
    assert "note: The stop hook fires before the transcript is fully written to disk" in text
    assert "(→ waitForTranscriptFlush(path, time.Now()))" in text
    assert "note: ok" not in text  # a label, not an explanation


def test_when_a_file_has_more_comments_than_room_the_fuller_explanations_are_kept():
    fields = "\n".join(f"\t// F{i} is a field.\n\tF{i} string" for i in range(200))
    why = (
        "// DeleteBranchCLI deletes a branch with the git CLI because go-git v5 does not persist\n"
        "// deletions when refs are packed or in a worktree context.\nfunc DeleteBranchCLI() error {"
    )
    notes = documented_names("type S struct {\n" + fields + "\n}\n" + why)
    assert "DeleteBranchCLI — DeleteBranchCLI deletes a branch" in notes
    assert len(notes) <= 2_400


@pytest.mark.parametrize(
    "frame",
    [
        "at TreeNodeRenderer (http://localhost:3000/chunk-36jrqfj4.js:{n}:20)",
        'File "/srv/app/views.py", line {n}, in render',
        "main.handler(0x{n})\n\t/src/app/main.go:{n} +0x1d",
        "at com.acme.Billing.charge(Billing.java:{n})",
    ],
)
def test_a_stack_trace_pasted_into_a_message_is_cut_to_its_first_lines_and_a_count(frame):
    trace = "\n".join(frame.format(n=40 + i) for i in range(300))
    message = ev(0, 1, Role.USER, text=f"I get this in the console:\n{trace}\nWhat is wrong with the tree?")
    text = render_event(message)
    assert text.startswith("user: I get this in the console:") and "What is wrong with the tree?" in text
    assert "more trace lines)" in text and len(text) < 1_000


def test_a_short_run_of_file_references_in_prose_is_kept_whole():
    lines = ["Changed:", "- src/app.ts:12 renamed the handler", "- src/db.ts:40 added the index", "Done."]
    message = ev(0, 1, Role.ASSISTANT, text="\n".join(lines))
    assert render_event(message) == "agent: " + "\n".join(lines)


def test_a_python_docstring_documents_the_declaration_above_it():
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    source = (
        'class Store:\n    """Keeps sessions on disk, one SQLite file per team."""\n\n'
        "    def open(self, path):\n"
        '        """Open the store; the schema is created on first use.\n\n        More.\n        """\n'
        + body
    )
    notes = documented_names(source)
    assert "defines: Store — Keeps sessions on disk, one SQLite file per team." in notes
    assert "defines: open — Open the store; the schema is created on first use." in notes


def test_a_long_diff_keeps_the_lines_it_adds_and_removes_not_whatever_says_error():
    diff = "\n".join(
        [f" src/file{i}.ts | {i} ++-" for i in range(6)]
        + ["--- a/package.json", "+++ b/package.json", "@@ -5,6 +5,8 @@"]
        + ['+    "@chakra-ui/react": "^3.33.0",', '-    "left-pad": "^1.0.0",']
        + [f'     "error-ex{i}": "1.3.{i}",' for i in range(40)]
        + ["tail 1", "tail 2", "tail 3"]
    )
    text = informative(diff, 480)
    assert '"@chakra-ui/react": "^3.33.0"' in text and '"left-pad"' in text and "error-ex" not in text


def test_a_list_of_findings_with_file_and_line_is_prose_not_a_trace():
    findings = "\n".join(
        f"- src/app/module{i}.py:{10 + i} — missing null check on the user input" for i in range(12)
    )
    message = ev(0, 1, Role.ASSISTANT, text=f"Review findings:\n{findings}")
    text = render_event(message)
    assert "more trace lines" not in text and "module11.py:21" in text


def test_a_document_read_whole_is_not_read_for_code_comments():
    doc = "# Guide\n" + "\n".join(
        f"## Section {i}\n**Term {i}** — what the term means here." for i in range(40)
    )
    call = ev(
        0, 1, Role.TOOL_CALL, tool_name="Read", tool_input={"file_path": "docs/guide.md"}, tool_call_id="r"
    )
    assert "note:" not in render_event(call, result(1, 2, doc, "r"))
    shell = ev(
        0, 1, Role.TOOL_CALL, tool_name="Bash", tool_input={"command": "cat SKILL.md"}, tool_call_id="s"
    )
    assert "note:" not in render_event(shell, result(1, 2, doc, "s"))


def test_markdown_bold_in_code_output_is_no_comment_but_a_doc_comments_star_lines_are():
    assert documented_names("**Experiment** — a committed run variant of the evals here\nx = 1") == ""
    source = (
        "/**\n * Build the tree from the files and their skills.\n */\nexport function buildTree(files) {"
    )
    assert documented_names(source).startswith("defines: buildTree — Build the tree")


def test_every_message_an_excerpt_renders_starts_as_snippets_read_a_message_start():
    # snippets end a heading's reach at the next message: they must know each way a message is rendered
    edit = ev(9, 9, Role.TOOL_CALL, tool_name="Edit", tool_input={"file_path": "a.go", "new_string": "x"})
    messages = [
        ev(0, 1, Role.USER, "deploy it"),
        ev(1, 2, Role.USER, "find the config", is_sidechain=True),
        ev(2, 3, Role.ASSISTANT, "Deployed."),
        ev(3, 4, Role.ASSISTANT, "Found it.", is_sidechain=True),
        ev(4, 5, Role.THINKING, "The config is read twice."),
        ev(5, 6, Role.SUMMARY, "The session so far."),
        ev(6, 7, Role.SYSTEM, "Conversation compacted"),
        shell(7, 8, "make deploy", "t1"),
        edit,
    ]
    for message in messages:
        assert starts_message(render_event(message)), render_event(message)
    assert not starts_message(render_event(result(8, 9, "deployed to prod", "t1")).strip())
    assert not starts_message("The service is running a heavy background build:")

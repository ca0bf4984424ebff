"""The tasks a project declares in its own files, learned when a session reads them (pipeline.manifests)."""

from __future__ import annotations

import pytest
from cairn.pipeline.learning.manifests import declared_tasks, manifest_facts

from tests.unit.session_events import tool_run

pytestmark = pytest.mark.unit

PACKAGE_JSON = """{
  "name": "frontend",
  "scripts": {
    "css:build": "tailwindcss -i ./src/styles.css -o ./dist/output.css",
    "dev": "bun run css:build && bun --hot server.ts",
    "test": "bun test src/"
  },
  "dependencies": { "react": "^19.0.0" }
}"""


def tasks(path: str, text: str) -> list[tuple[str, str]]:
    found = declared_tasks(path, text)
    assert found is not None
    return [(t.name, t.command) for t in found[1]]


def test_package_json_scripts_are_read_even_with_a_readers_line_numbers():
    numbered = "\n".join(f"{i:>6}→{line}" for i, line in enumerate(PACKAGE_JSON.splitlines(), 1))
    assert tasks("/Users/me/app/frontend/package.json", numbered) == [
        ("css:build", "tailwindcss -i ./src/styles.css -o ./dist/output.css"),
        ("dev", "bun run css:build && bun --hot server.ts"),
        ("test", "bun test src/"),
    ]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "Makefile",
            ".PHONY: test\ntest:\n\tgo test ./...\n%.o: %.c\n\tcc\nlint: fmt\n\t@golangci-lint run",
            [("make test", "go test ./..."), ("make lint", "golangci-lint run")],
        ),
        (
            "justfile",
            'set shell := ["bash"]\ntest *args:\n    cargo test {{args}}\n',
            [("just test", "cargo test {{args}}")],
        ),
        (
            "mise.toml",
            '[tools]\ngo = "1.25"\n[tasks.lint]\ndescription = "Lint"\nrun = "golangci-lint run"\n'
            '[tasks]\nfmt = "gofmt -s -w ."',
            [("mise run lint", "golangci-lint run"), ("mise run fmt", "gofmt -s -w .")],
        ),
        (
            "pyproject.toml",
            '[project]\nname = "x"\n[tool.poe.tasks]\ntest = "pytest -q"\nlint = { cmd = "ruff check" }',
            [("test", "pytest -q"), ("lint", "ruff check")],
        ),
        (
            "Taskfile.yml",
            "version: '3'\ntasks:\n  build:\n    cmds:\n      - go build ./...\n"
            "  test:\n    cmd: go test ./...",
            [("task build", "go build ./..."), ("task test", "go test ./...")],
        ),
        (
            "mix.exs",
            '  defp aliases do\n    [\n      setup: ["deps.get"],\n'
            '      test: ["ecto.create --quiet", "test"]\n    ]\n  end',
            [("mix setup", '["deps.get"]'), ("mix test", '["ecto.create --quiet", "test"]')],
        ),
        (
            ".cargo/config.toml",
            '[build]\njobs = 4\n[alias]\nxtask = "run --package xtask --"\nci = ["clippy", "--all-targets"]',
            [("cargo xtask", "cargo run --package xtask --"), ("cargo ci", "cargo clippy --all-targets")],
        ),
        (
            ".github/workflows/ci.yml",
            "jobs:\n  ci:\n    steps:\n      - name: Lint\n        run: biome check .\n"
            "      - run: |\n          bun test",
            [("Lint", "biome check ."), ("run", "bun test")],
        ),
    ],
)
def test_each_kind_of_project_file_gives_its_tasks(path, text, expected):
    assert tasks(path, text) == expected


def test_a_file_that_declares_no_tasks_is_no_manifest():
    assert declared_tasks("src/app.ts", "export const x = 1") is None


def test_a_manifest_the_session_read_becomes_a_fact_with_its_tasks_one_a_line():
    events = tool_run(1, "Read", {"file_path": "/Users/me/app/frontend/package.json"}, PACKAGE_JSON)
    (fact,) = manifest_facts(events)
    assert fact.title == "Scripts declared in frontend/package.json"
    assert "- dev: `bun run css:build && bun --hot server.ts`" in fact.content.splitlines()
    assert "/Users/me" not in fact.content and (fact.line_start, fact.line_end) == (1, 2)


def test_a_manifest_printed_by_a_shell_command_counts_and_the_last_read_wins():
    events = [
        *tool_run(1, "exec_command", {"cmd": "sed -n '1,220p' package.json"}, PACKAGE_JSON),
        *tool_run(
            3, "Bash", {"command": "cat package.json"}, PACKAGE_JSON.replace("bun test src/", "vitest")
        ),
        *tool_run(5, "Bash", {"command": "cat package.json | jq .scripts"}, '{"x": "y"}'),
        *tool_run(7, "Read", {"file_path": "Makefile"}, "No such file", error=True),
    ]
    (fact,) = manifest_facts(events)
    assert "- test: `vitest`" in fact.content and fact.line_start == 3


def test_a_manifest_printed_after_a_cd_still_counts():
    events = tool_run(1, "Bash", {"command": "cd frontend && cat package.json"}, PACKAGE_JSON)
    assert [f.title for f in manifest_facts(events)] == ["Scripts declared in package.json"]

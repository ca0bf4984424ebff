"""The repository manifests the capture worker sends with a session, and how the parser sets them aside."""

from __future__ import annotations

import json

import pytest
from cairn.pipeline.learning.manifests import manifest_facts
from cairn.project_files import (
    MAX_FILE_BYTES,
    ProjectFile,
    collect,
    digest,
    to_jsonl,
)
from cairn.transcripts import parse_transcript

from tests.integration.pipeline_helpers import claude_transcript
from tests.unit.session_events import tool_run

pytestmark = pytest.mark.unit

SCRIPTS = '{\n  "scripts": {\n    "test": "vitest run",\n    "lint": "eslint ."\n  }\n}\n'


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "package.json").write_text(SCRIPTS)
    (root / "Makefile").write_text("build:\n\tgo build ./...\n")
    (root / "README.md").write_text("# shop\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("steps:\n  - run: make build\n")
    (root / "web").mkdir()
    (root / "web" / "package.json").write_text('{"scripts": {\n"dev": "vite"\n}}\n')
    return root


def test_the_manifests_of_the_repository_and_of_the_working_folder_are_collected(repo):
    files = collect(repo / "web")
    assert [f.path for f in files] == [
        "Makefile",
        "package.json",
        ".github/workflows/ci.yml",
        "web/package.json",
    ]
    assert {f.root for f in files} == {repo.resolve().as_posix()}
    assert files[1].text == SCRIPTS


def test_nothing_is_collected_for_a_missing_or_empty_working_folder(tmp_path):
    assert collect(tmp_path / "gone") == []
    assert collect("") == []


def test_a_huge_manifest_is_cut_at_a_line_end_and_a_binary_one_is_skipped(repo):
    (repo / "Makefile").write_text("all:\n\techo hi\n" * (MAX_FILE_BYTES // 8))
    (repo / "package.json").write_bytes(b'{"scripts": \0}')
    files = {f.path: f.text for f in collect(repo)}
    assert "package.json" not in files
    assert len(files["Makefile"]) <= MAX_FILE_BYTES and files["Makefile"].endswith("\n")


def test_the_digest_changes_only_when_a_manifest_does(repo):
    before = digest(collect(repo))
    assert digest(collect(repo)) == before
    (repo / "package.json").write_text(SCRIPTS.replace("vitest run", "vitest run --coverage"))
    assert digest(collect(repo)) != before


def test_the_parser_sets_project_file_lines_aside_from_the_agents_events(repo):
    transcript = claude_transcript("s-1", [("user", "Add a cart page.")], cwd=str(repo))
    plain = parse_transcript(transcript, agent="claude-code")
    bad = json.dumps({"type": "cairn.project_file", "path": "notes.txt", "text": "x"}).encode() + b"\n"
    parsed = parse_transcript(transcript + to_jsonl(collect(repo)) + bad, agent="claude-code")
    assert parsed.events == plain.events
    assert [f.path for f in parsed.project_files] == ["Makefile", "package.json", ".github/workflows/ci.yml"]
    assert all(f.line_no > len(transcript.splitlines()) for f in parsed.project_files)


def test_a_manifest_the_hook_sent_is_learned_though_the_session_never_read_it():
    sent = ProjectFile("package.json", SCRIPTS, "/home/dev/shop", 40)
    events = tool_run(1, "Bash", {"command": "ls"}, "package.json")
    [fact] = manifest_facts(events, [sent])
    assert fact.content == "Scripts declared in package.json:\n- test: `vitest run`\n- lint: `eslint .`"
    assert (fact.line_start, fact.line_end) == (40, 40)


def test_the_hooks_copy_stands_for_the_sessions_read_of_the_same_file_but_not_of_another():
    sent = ProjectFile("package.json", SCRIPTS, "/home/dev/shop", 40)
    stale = SCRIPTS.replace("vitest run", "jest")
    same = tool_run(1, "Read", {"file_path": "/home/dev/shop/package.json"}, stale)
    other = tool_run(
        3, "Read", {"file_path": "/home/dev/shop/web/package.json"}, '{"scripts": {\n"dev": "vite"\n}}'
    )
    facts = manifest_facts(same + other, [sent])
    assert sorted(f.details["path"] for f in facts) == ["package.json", "web/package.json"]
    assert "vitest run" in next(f.content for f in facts if f.details["path"] == "package.json")


def test_a_manifest_fact_names_the_file_it_describes_so_a_newer_one_replaces_it():
    sent = ProjectFile("web/package.json", SCRIPTS, "/home/dev/shop", 40)
    [fact] = manifest_facts([], [sent])
    assert fact.details["about"] == "tasks of web/package.json"


def test_project_files_after_a_single_document_gemini_session_are_read_too(repo):
    doc = json.dumps(
        {"sessionId": "g-1", "messages": [{"id": "1", "type": "user", "content": "Add a cart page."}]},
        indent=2,
    ).encode()
    parsed = parse_transcript(doc + b"\n" + to_jsonl(collect(repo)), agent="gemini-cli")
    assert parsed.events and parsed.events[0].text == "Add a cart page."
    assert [f.path for f in parsed.project_files][:2] == ["Makefile", "package.json"]
    assert parsed.project_files[0].line_no == doc.count(b"\n") + 2


def test_a_flood_of_project_file_lines_keeps_the_newest_copy_of_at_most_sixteen_paths():
    transcript = claude_transcript("s-1", [("user", "Add a cart page.")])
    flood = [ProjectFile(f"app{i}/package.json", SCRIPTS) for i in range(40)]
    again = [ProjectFile("app39/package.json", SCRIPTS.replace("vitest run", "vitest run --bail"))]
    parsed = parse_transcript(transcript + to_jsonl(flood) + to_jsonl(again), agent="claude-code")
    assert len(parsed.project_files) == 16
    assert parsed.project_files[-1].path == "app39/package.json" and "--bail" in parsed.project_files[-1].text


def test_an_unreadable_manifest_is_skipped_and_the_others_still_go(repo, monkeypatch):
    import cairn.project_files as pf

    real = pf._head

    def head(path):
        if path.name == "Makefile":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(pf, "_head", head)
    assert [f.path for f in collect(repo)] == ["package.json", ".github/workflows/ci.yml"]

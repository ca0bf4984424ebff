"""`cairn backfill` finds this project's past sessions in each agent's own store, and only those."""

from __future__ import annotations

import json

import pytest
from cairn.capture.backfill import read_session, scan, select
from cairn.capture.stores import Project
from cairn.transcripts import parse_transcript

from tests.agent_stores import EXPECTED, FOREIGN, PARTS, REMOTE, lay_out, make_project

pytestmark = pytest.mark.unit


@pytest.fixture
def world(tmp_path):
    project = make_project(tmp_path / "work" / "shop")
    home = lay_out(tmp_path / "home", project)
    return project, home


def test_a_fake_home_yields_exactly_this_projects_sessions_oldest_first(world):
    project, home = world
    found = scan(Project.of(project), home, {})
    assert [s.key for s in found.sessions] == list(EXPECTED)
    assert found.foreign == FOREIGN
    assert set(found.stores) == {"claude-code", "codex", "gemini-cli", "opencode", "copilot-cli"}


def test_a_session_brings_its_sub_agents_and_worker_threads_as_further_parts(world):
    project, home = world
    parts = {s.key: s.parts for s in scan(Project.of(project), home, {}).sessions}
    assert {k: n for k, n in parts.items() if n > 1} == PARTS
    claude = scan(Project.of(project), home, {}).sessions[0]
    assert [p.parent.name for p in claude.others] == ["subagents"]


def test_a_subfolder_of_the_project_finds_the_same_sessions(world):
    project, home = world
    (project / "src" / "api").mkdir(parents=True)
    found = scan(Project.of(project / "src" / "api"), home, {})
    assert [s.key for s in found.sessions] == list(EXPECTED)


def test_another_clone_of_the_same_remote_is_this_project_and_another_remote_is_not(world, tmp_path):
    project, home = world
    here = Project.of(project)
    other_clone = make_project(tmp_path / "elsewhere" / "shop-copy", REMOTE)
    stranger = make_project(tmp_path / "elsewhere" / "blog", "git@github.com:acme/blog.git")
    assert here.holds(str(other_clone)) and not here.holds(str(stranger))
    assert here.holds(str(project / "not-yet-created")) and not here.holds("/gone/shop")


def test_nothing_is_found_for_a_project_no_agent_worked_in(world, tmp_path):
    _, home = world
    lonely = make_project(tmp_path / "lonely", "https://github.com/acme/lonely.git")
    found = scan(Project.of(lonely), home, {})
    # every session of the HOME is another project's: the six, the worker thread (a rollout of its own)
    # and the three others
    assert found.sessions == () and found.foreign == len(EXPECTED) + 1 + FOREIGN


def test_an_agents_own_variable_moves_its_store(world, tmp_path):
    project, home = world
    (home / ".codex").rename(tmp_path / "codex-elsewhere")
    assert not [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "codex"]
    moved = scan(Project.of(project), home, {"CODEX_HOME": str(tmp_path / "codex-elsewhere")})
    assert [s.key for s in moved.sessions] == list(EXPECTED)


def test_since_and_last_limit_by_age_and_count_and_keep_the_oldest_first_order(world):
    project, home = world
    sessions = scan(Project.of(project), home, {}).sessions
    since = sessions[3].started
    assert [s.key for s in select(sessions, since, None)] == list(EXPECTED[3:])
    assert [s.key for s in select(sessions, None, 2)] == list(EXPECTED[-2:])
    assert [s.key for s in select(sessions, since, 1)] == list(EXPECTED[-1:])


def test_every_found_session_reads_as_its_agents_transcript_with_its_other_files(world):
    project, home = world
    for s in scan(Project.of(project), home, {}).sessions:
        main, others = read_session(s)
        assert len(others) == s.parts - 1
        parsed = parse_transcript(main + b"".join(others), s.agent, s.path.name)
        assert (parsed.agent, parsed.session_id) == (s.agent, s.session_id) and parsed.events


def test_an_opencode_session_out_of_its_database_reads_as_the_plugin_writes_it(world):
    project, home = world
    (s,) = [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "opencode"]
    main, _ = read_session(s)
    head, *messages = [json.loads(line) for line in main.splitlines()]
    assert head == {"type": "session", "id": s.session_id, "directory": str(project.resolve())}
    assert all(m["info"]["sessionID"] == s.session_id for m in messages)
    assert all(p["messageID"] == m["info"]["id"] for m in messages for p in m["parts"])


def test_opencode_sessions_kept_as_json_files_before_its_database_are_found_and_read_the_same(world):
    project, home = world
    data = home / ".local" / "share" / "opencode"
    (s,) = [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "opencode"]
    from_db, _ = read_session(s)
    head, *messages = [json.loads(line) for line in from_db.splitlines()]
    storage = data / "storage"  # the layout before 1.2: one JSON file per session, message and part
    info = {"id": s.session_id, "directory": head["directory"], "time": {"created": s.started * 1000}}
    _put(storage / "session" / "prj_1" / f"{s.session_id}.json", info)
    for m in messages:
        _put(storage / "message" / s.session_id / f"{m['info']['id']}.json", m["info"])
        for p in m["parts"]:
            _put(storage / "part" / m["info"]["id"] / f"{p['id']}.json", p)
    (data / "opencode.db").unlink()
    (old,) = [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "opencode"]
    assert (old.source, old.session_id, old.started) == ("opencode-storage", s.session_id, s.started)
    assert read_session(old)[0] == from_db


def test_a_codex_rollout_kept_compressed_is_found_and_read(world):
    import zstandard

    project, home = world
    (s,) = [s for s in scan(Project.of(project), home, {}).sessions if s.key == EXPECTED[1]]
    packed = s.path.with_name(s.path.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(s.path.read_bytes()))
    plain = s.path.read_bytes()
    s.path.unlink()
    (z,) = [x for x in scan(Project.of(project), home, {}).sessions if x.key == EXPECTED[1]]
    assert z.path == packed and read_session(z)[0] == plain


def _put(path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_a_claude_session_continued_after_a_compaction_is_the_one_its_file_names(world):
    """Claude Code starts a new transcript after a compaction with the end of the old session replayed,
    those lines carrying the old session's id; the hooks send the file as the new session, so must this."""
    project, home = world
    (first,) = [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "claude-code"]
    old, new = first.session_id, "9bc2127b-0808-4411-907c-c10ed3ac12de"
    lines = first.path.read_text().splitlines(keepends=True)
    later = "".join(line.replace(old, new) for line in lines[8:])
    first.path.with_name(f"{new}.jsonl").write_text("".join(lines[:8]) + later)
    first.path.unlink()
    (s,) = [s for s in scan(Project.of(project), home, {}).sessions if s.agent == "claude-code"]
    assert s.session_id == new and s.started == first.started

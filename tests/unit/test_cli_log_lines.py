"""The server log's one line per learned session."""

from cairn.domain.models import Session
from cairn.pipeline.running.log_lines import learned_line


def test_learned_line_names_the_session_agent_project_and_what_was_created_and_merged():
    session = Session(
        id="s-1",
        team_id="t",
        project="github.com/acme/shop",
        agent="claude-code",
        stats={"consolidate": {"created": 4, "merged": 2, "superseded": 0}},
    )
    assert learned_line(session) == "learned s-1 (claude-code, github.com/acme/shop): +4 ~2"


def test_learned_line_shows_superseded_memories_only_when_there_are_some():
    session = Session(
        id="s-2",
        team_id="t",
        project="p",
        agent="codex",
        stats={"consolidate": {"created": 1, "merged": 0, "superseded": 3}},
    )
    assert learned_line(session) == "learned s-2 (codex, p): +1 ~0 -3"


def test_learned_line_of_a_session_without_consolidate_stats_or_project_says_so():
    session = Session(id="s-3", team_id="t", project=None, agent="codex")
    assert learned_line(session) == "learned s-3 (codex, no project): +0 ~0"

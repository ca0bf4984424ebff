"""Which project `cairn ingest` files a transcript under when the user does not say."""

from pathlib import Path

import pytest
from cairn.cli.errors import CliError
from cairn.cli.pipeline_cmds import project_for
from cairn.transcripts import ParsedTranscript, ParseStats

pytestmark = pytest.mark.unit
T = Path("t.jsonl")


def parsed(cwd=None, remote=None) -> ParsedTranscript:
    return ParsedTranscript(
        agent="codex", session_id="s", events=(), stats=ParseStats(), cwd=cwd, git_remote=remote
    )


def test_project_given_by_the_user_wins_and_needs_no_explanation():
    filing = project_for("mine", parsed("/elsewhere/shop", "git@github.com:Acme/Shop.git"), T)
    assert (filing.project, filing.why) == ("mine", "")


def test_a_folder_that_exists_here_is_keyed_like_the_hooks_key_it(tmp_path):
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:Acme/Shop.git\n')
    filing = project_for(None, parsed(str(repo)), T)
    assert filing.project == "github.com/acme/shop" and str(repo) in filing.why


def test_a_folder_not_on_this_machine_is_filed_under_the_transcripts_git_remote():
    filing = project_for(None, parsed("/home/someone/shop", "https://github.com/Acme/Shop.git"), T)
    assert filing.project == "github.com/acme/shop"
    assert "git remote" in filing.why and "/home/someone/shop is not on this machine" in filing.why


def test_without_a_remote_a_missing_folder_gives_its_name_not_the_shells_project():
    filing = project_for(None, parsed("/home/someone/billing-api"), T)
    assert filing.project == "billing-api" and "not on this machine" in filing.why


def test_a_windows_folder_gives_its_name_too():
    assert project_for(None, parsed("C:\\Users\\dev\\billing-api"), T).project == "billing-api"


def test_a_transcript_that_names_no_folder_needs_project():
    with pytest.raises(CliError, match="pass --project"):
        project_for(None, parsed(), T)

"""Project keys from a working directory: the origin remote, the repository name, or a .cairn.toml."""

import pytest
from cairn.projects import project_key

pytestmark = pytest.mark.integration


def _repo(root, remote=None):
    (root / ".git").mkdir(parents=True)
    if remote:
        config = f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n'
        (root / ".git" / "config").write_text(config)
    return root


def test_a_subdirectory_of_a_clone_is_keyed_by_the_origin_remote(tmp_path):
    repo = _repo(tmp_path / "shop", "git@github.com:Acme/Shop.git")
    (repo / "src" / "api").mkdir(parents=True)
    assert project_key(repo / "src" / "api") == "github.com/acme/shop"


def test_a_repository_without_a_remote_is_keyed_by_its_root_name(tmp_path):
    repo = _repo(tmp_path / "Scratch")
    (repo / "notes").mkdir()
    assert project_key(repo / "notes") == "scratch"


def test_a_cairn_toml_in_an_ancestor_overrides_the_remote(tmp_path):
    repo = _repo(tmp_path / "mono", "https://github.com/acme/mono")
    service = repo / "services" / "billing"
    service.mkdir(parents=True)
    (repo / "services" / ".cairn.toml").write_text('project = "acme-billing"\n')
    assert project_key(service) == "acme-billing"
    assert project_key(repo) == "github.com/acme/mono"


def test_a_broken_cairn_toml_is_ignored_not_fatal(tmp_path):
    repo = _repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    (repo / ".cairn.toml").write_text("project = [unterminated")
    assert project_key(repo) == "github.com/acme/shop"


def test_a_worktree_reads_the_remote_of_its_main_repository(tmp_path):
    main = _repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    gitdir = main / ".git" / "worktrees" / "feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    tree = tmp_path / "shop-feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {gitdir}\n")
    assert project_key(tree) == "github.com/acme/shop"

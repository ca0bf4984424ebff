"""Which project a working directory belongs to.

The key is the normalised git remote URL (`github.com/org/repo`), or the repository root's name when
there is no remote, unless a `.cairn.toml` with `project = "..."` in the directory or an ancestor says
otherwise. Read from files, not by running git, so hooks stay fast and work without git installed.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

MARKER = ".cairn.toml"
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")


def normalise_remote(url: str) -> str:
    """`git@GitHub.com:Org/Repo.git`, `https://u:p@github.com/org/repo/` -> `github.com/org/repo`."""
    url = url.strip()
    if "://" in url:
        rest = url.split("://", 1)[1]
        hostpart, _, path = rest.partition("/")
        host = hostpart.rsplit("@", 1)[-1].split(":", 1)[0]
    elif m := _SCP_LIKE.match(url):
        host, path = m.group("host"), m.group("path")
    else:  # a local path used as a remote
        host, path = "", url
    path = path.strip("/")
    path = path.removesuffix(".git")
    key = f"{host}/{path}" if host else path
    return key.lower()


def _find_upwards(start: Path, name: str) -> Path | None:
    for d in (start, *start.parents):
        if (d / name).exists():
            return d / name
    return None


def _git_dir(dot_git: Path) -> Path:
    if dot_git.is_file():  # worktree or submodule: "gitdir: <path>"
        text = dot_git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.split(":", 1)[1].strip())
            gd = target if target.is_absolute() else (dot_git.parent / target).resolve()
            common = gd / "commondir"
            if common.exists():
                return (gd / common.read_text().strip()).resolve()
            return gd
    return dot_git


def git_remote(repo_root: Path) -> str | None:
    config = _git_dir(repo_root / ".git") / "config"
    if not config.exists():
        return None
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(config, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    remotes = [s for s in parser.sections() if s.startswith('remote "')]
    preferred = ['remote "origin"'] + sorted(remotes)
    for section in preferred:
        if parser.has_option(section, "url"):
            return parser.get(section, "url")
    return None


def project_key(cwd: str | Path) -> str:
    start = Path(cwd).resolve()
    marker = _find_upwards(start, MARKER)
    if marker is not None:
        try:
            value = tomllib.loads(marker.read_text()).get("project")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            value = None
        if isinstance(value, str) and value.strip():
            return value.strip()
    dot_git = _find_upwards(start, ".git")
    if dot_git is not None:
        remote = git_remote(dot_git.parent)
        return normalise_remote(remote) if remote else dot_git.parent.name.lower()
    return start.name.lower() or "default"

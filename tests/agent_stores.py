"""A fake HOME holding real agent sessions laid out exactly as each agent stores them, for `cairn backfill`.

`tests/fixtures/agent_stores/home` is such a HOME recorded for a project at `/home/dev/shop` (see the
SOURCE.md beside it). `lay_out` copies it for a project anywhere: the recorded path becomes the project's
in every file and folder name (Claude Code's folder, Gemini CLI's project hash), and OpenCode's database
is built from its SQL. Used by the backfill tests and `benchmarks/backfill_scan.py`.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from tests.paths import FIXTURES

STORES = FIXTURES / "agent_stores"
HOME = STORES / "home"
RECORDED = "/home/dev/shop"
REMOTE = "https://github.com/acme/shop.git"
PROJECT = "github.com/acme/shop"

#: this project's sessions in the fixture, oldest first (agent:session id), and the files each brings
EXPECTED = (
    "claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b",
    "codex:019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
    "codex:019efc87-fa98-7971-91df-0c9512a065da",
    "gemini-cli:eb1eac0c-7cd5-4348-8f66-e81c6da387f2",
    "copilot-cli:800b4105-97fb-4654-81ff-9c0cd2e8bcb5",
    "opencode:ses_dbcee1730ffeJP6VcgzetcJviE",
)
PARTS = {
    "claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b": 2,  # with its sub-agent
    "codex:019efc87-fa98-7971-91df-0c9512a065da": 2,  # with its worker thread
}
FOREIGN = 3  # a Claude Code, a Codex and a Gemini CLI session of other projects


def claude_folder(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_project(path: Path, remote: str = REMOTE) -> Path:
    """A repository folder as Cairn reads one: `.git/config` naming its remote (no git needed)."""
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (path / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n')
    return path


def lay_out(home: Path, project: Path) -> Path:
    """The fixture HOME at `home`, recorded in `project` instead of /home/dev/shop."""
    where = str(project.resolve())
    swaps = [(RECORDED, where), (sha(RECORDED), sha(where))]
    for src in sorted(p for p in HOME.rglob("*") if p.is_file()):
        rel = str(src.relative_to(HOME)).replace(claude_folder(RECORDED), claude_folder(where))
        for old, new in swaps:
            rel = rel.replace(old, new)
        dest = home / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        for old, new in swaps:
            data = data.replace(old.encode(), new.encode())
        if dest.name == "opencode.sql":
            with sqlite3.connect(dest.with_name("opencode.db")) as db:
                db.executescript(data.decode())
            db.close()
            continue
        dest.write_bytes(data)
    return home

"""The files where a repository declares how it is built, tested and released, and how they travel
with a session's transcript.

package.json scripts, Makefile targets, CI steps... say what a project's checks are even when the
agent never opened them. The capture worker reads them from the session's repository (its root, and
the working directory when that is a sub-folder) and appends them to a part of the session as lines
of their own type, `cairn.project_file`, which the transcript parser sets aside from the agent's
events; the pipeline learns their tasks as it does a manifest the session read. They are sent again
only when they changed. Standard library only: the capture worker imports this.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

LINE_TYPE = "cairn.project_file"
MAX_FILE_BYTES = 64 * 1024  # a manifest is read line by line, so the head of a huge one still counts
MAX_TOTAL_BYTES = 256 * 1024
MAX_FILES = 16
MAX_DEPTH = 8  # how far up from the working directory the repository root is looked for

# (what the file declares, the path pattern naming it): one entry per kind of manifest
MANIFESTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("package.json", re.compile(r"(?:^|/)package\.json$")),
    ("composer.json", re.compile(r"(?:^|/)composer\.json$")),
    ("deno.json", re.compile(r"(?:^|/)deno\.jsonc?$")),
    ("makefile", re.compile(r"(?:^|/)(?:GNU)?[Mm]akefile$")),
    ("justfile", re.compile(r"(?:^|/)[Jj]ustfile$|(?:^|/)\.justfile$")),
    ("mise", re.compile(r"(?:^|/)\.?mise(?:\.local)?\.toml$")),
    ("pyproject", re.compile(r"(?:^|/)pyproject\.toml$")),
    ("taskfile", re.compile(r"(?:^|/)Taskfile\.ya?ml$")),
    ("mix", re.compile(r"(?:^|/)mix\.exs$")),
    ("cargo", re.compile(r"(?:^|/)\.cargo/config(?:\.toml)?$")),
    ("workflow", re.compile(r"(?:^|/)\.github/workflows/[^/]+\.ya?ml$|(?:^|/)\.gitlab-ci\.ya?ml$")),
)


@dataclass(frozen=True, slots=True)
class ProjectFile:
    path: str  # relative to the repository root, with `/`
    text: str
    root: str = ""  # the repository root on the machine it came from: tells a session's read of it
    line_no: int = 0  # where it sits in the stored transcript, once parsed


def manifest_kind(path: str) -> str | None:
    """Which kind of manifest `path` names, or None."""
    path = path.replace("\\", "/")
    return next((kind for kind, pattern in MANIFESTS if pattern.search(path)), None)


def repository_root(cwd: Path) -> Path:
    """The nearest folder at or above `cwd` holding `.git`, else `cwd` itself."""
    for folder in [cwd, *cwd.parents][:MAX_DEPTH]:
        if (folder / ".git").exists():
            return folder
    return cwd


def collect(cwd: str | Path) -> list[ProjectFile]:
    """The manifests of the repository `cwd` is in: at its root, in CI folders and in `cwd`, bounded."""
    if not str(cwd):
        return []
    try:
        here = Path(cwd).resolve()
        if not here.is_dir():
            return []
        root = repository_root(here)
        folders = [root, root / ".cargo", root / ".github" / "workflows"] + ([here] if here != root else [])
        found: list[ProjectFile] = []
        total = 0
        for folder in folders:
            for path in _files(folder):
                relative = path.relative_to(root).as_posix()
                if not manifest_kind(relative) or len(found) >= MAX_FILES:
                    continue
                try:
                    text = _head(path)
                except OSError:  # unreadable (permissions, vanished): the others still go
                    continue
                if text is None or total + len(text) > MAX_TOTAL_BYTES:
                    continue
                found.append(ProjectFile(relative, text, root.as_posix()))
                total += len(text)
        return found
    except (OSError, ValueError):  # unreadable folder, a path outside the root: send nothing
        return []


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink())


def _head(path: Path) -> str | None:
    """The file's first MAX_FILE_BYTES as text, cut at a line end; None for a binary file."""
    with path.open("rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if b"\0" in data:
        return None
    if len(data) > MAX_FILE_BYTES:
        data = data[: data.rfind(b"\n", 0, MAX_FILE_BYTES) + 1]
    return data.decode("utf-8", "replace")


def to_jsonl(files: list[ProjectFile]) -> bytes:
    """One `cairn.project_file` line per file, ready to append to a part's JSONL."""
    return b"".join(
        json.dumps({"type": LINE_TYPE, "root": f.root, "path": f.path, "text": f.text}).encode() + b"\n"
        for f in files
    )


def digest(files: list[ProjectFile]) -> str:
    """Changes when any file's path or content does: the worker sends them again only then."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.path.encode() + b"\0" + f.text.encode() + b"\0")
    return h.hexdigest()[:32]


def from_record(line_no: int, record: dict) -> ProjectFile | None:
    """The project file a transcript line carries, or None when the line is not one (or malformed)."""
    if record.get("type") != LINE_TYPE:
        return None
    path, text = record.get("path"), record.get("text")
    if not isinstance(path, str) or not isinstance(text, str) or not manifest_kind(path):
        return None
    root = record.get("root") if isinstance(record.get("root"), str) else ""
    return ProjectFile(path.replace("\\", "/")[:300], text[:MAX_FILE_BYTES], root[:1000], line_no)


def newest(files: list[ProjectFile]) -> tuple[ProjectFile, ...]:
    """The last copy of each path, at most MAX_FILES of them (the latest sent): a session sends its
    manifests again when they change, and a hostile upload cannot turn into thousands of facts."""
    latest = {f.path: f for f in files}
    return tuple(sorted(latest.values(), key=lambda f: f.line_no)[-MAX_FILES:])

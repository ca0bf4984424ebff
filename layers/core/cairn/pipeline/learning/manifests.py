"""The tasks a project declares in its own files, learned when a session reads those files.

A repository says how it is built, tested and released in files every stack has one of: package.json
(and composer.json, deno.json) scripts, Makefile and justfile targets, mise.toml, Taskfile and
pyproject task tables, mix.exs and cargo aliases, CI workflows' `run:` steps. An agent reads them to find out
what to run; what it read is then a fact about the project, whether or not the session ran the task:
"how do I build the CSS?", "can I just run npm publish?".

The file is recognised by its name, whatever tool read it (Claude Code's Read, `cat`, `sed -n`); its
tasks are parsed line by line, so a file read in part (`sed -n '1,220p'`) still gives what it showed.
Each file read gives one fact (its last read wins), its tasks one a line, bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from cairn.domain.models import MemoryKind
from cairn.pipeline.models import Candidate, EventDoc
from cairn.pipeline.reading.commands import core_steps
from cairn.pipeline.reading.shell import command_of, is_shell
from cairn.pipeline.reading.steps import strip_headers
from cairn.project_files import ProjectFile, manifest_kind
from cairn.transcripts.model import Role
from cairn.transcripts.tools import READ_TOOLS

MAX_TASKS, TASK_CHARS, FACT_CHARS = 24, 160, 1_600
_PRINTERS = frozenset({"cat", "sed", "head", "bat", "nl", "less", "more", "type", "view"})
_LINE_NUMBER = re.compile(r"^\s*\d+(?:\t|:\s)")  # `cat -n`'s and `nl`'s numbers (`12\t`, `12: `)


@dataclass(frozen=True, slots=True)
class DeclaredTask:
    name: str
    command: str  # what the task runs, as the file says it (empty when it does not say)


# --- parsers, one per kind of file: lines in, tasks out --------------------------------------------
def _json_block(key: str) -> Callable[[list[str]], list[DeclaredTask]]:
    """`"scripts": { "name": "command", ... }` in a JSON manifest, read line by line."""
    opener = re.compile(rf'"{key}"\s*:\s*\{{')
    entry = re.compile(r'^\s*"([^"]{1,80})"\s*:\s*"((?:[^"\\]|\\.)*)"')

    def parse(lines: list[str]) -> list[DeclaredTask]:
        tasks, inside = [], False
        for line in lines:
            if not inside:
                inside = bool(opener.search(line))
                continue
            if line.strip().startswith("}"):
                break
            if m := entry.match(line):
                tasks.append(DeclaredTask(m.group(1), m.group(2).replace('\\"', '"')))
        return tasks

    return parse


_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][\w.-]*)\s*:(?![=:])")


def _makefile(lines: list[str]) -> list[DeclaredTask]:
    tasks: list[DeclaredTask] = []
    for i, line in enumerate(lines):
        if (m := _MAKE_TARGET.match(line)) and "%" not in m.group(1) and not m.group(1).startswith("."):
            recipe = next((r.strip() for r in lines[i + 1 : i + 4] if r.startswith("\t") and r.strip()), "")
            tasks.append(DeclaredTask(f"make {m.group(1)}", recipe.lstrip("@")))
    return tasks


_JUST_RECIPE = re.compile(r"^@?([A-Za-z][\w-]*)(?:\s+[^:=]*)?:(?!=)")


def _justfile(lines: list[str]) -> list[DeclaredTask]:
    tasks: list[DeclaredTask] = []
    for i, line in enumerate(lines):
        if m := _JUST_RECIPE.match(line):
            recipe = next((r.strip() for r in lines[i + 1 : i + 4] if r[:1] in (" ", "\t") and r.strip()), "")
            tasks.append(DeclaredTask(f"just {m.group(1)}", recipe.lstrip("@")))
    return tasks


_TOML_TASK = re.compile(r'^\[tasks\.(?:"([^"]+)"|([\w:.-]+))\]')
_TOML_RUN = re.compile(r'^run\s*=\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|\[\s*"([^"]*)")')
_TOML_INLINE = re.compile(
    r'^(?:"([^"]+)"|([\w:.-]+))\s*=\s*(?:"((?:[^"\\]|\\.)*)"|\{[^}]*\b(?:run|cmd|shell)\s*=\s*"([^"]*)")'
)


def _mise(lines: list[str]) -> list[DeclaredTask]:
    """`[tasks.lint]` + `run = "…"`, or `name = "…"` / `name = { run = "…" }` under `[tasks]`."""
    tasks: list[DeclaredTask] = []
    section = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
            if m := _TOML_TASK.match(stripped):
                tasks.append(DeclaredTask(f"mise run {m.group(1) or m.group(2)}", ""))
            continue
        if (
            section.startswith("[tasks.")
            and tasks
            and not tasks[-1].command
            and (m := _TOML_RUN.match(stripped))
        ):
            tasks[-1] = DeclaredTask(tasks[-1].name, next(g for g in m.groups() if g is not None))
        elif section == "[tasks]" and (m := _TOML_INLINE.match(stripped)):
            tasks.append(DeclaredTask(f"mise run {m.group(1) or m.group(2)}", m.group(3) or m.group(4) or ""))
    return tasks


_PY_TASK_TABLES = re.compile(
    r"^\[tool\.(?:poe\.tasks|taskipy\.tasks|pdm\.scripts|hatch\.envs\.[\w-]+\.scripts)\]$"
)


def _in_tables(lines: list[str], wanted: Callable[[str], object]) -> Iterator[str]:
    """The stripped lines of a TOML file under the `[table]` headers `wanted` accepts."""
    inside = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            inside = bool(wanted(stripped))
        elif inside:
            yield stripped


def _pyproject(lines: list[str]) -> list[DeclaredTask]:
    return [
        DeclaredTask(m.group(1) or m.group(2), m.group(3) or m.group(4) or "")
        for line in _in_tables(lines, _PY_TASK_TABLES.match)
        if (m := _TOML_INLINE.match(line))
    ]


_YAML_KEY = re.compile(r"^(\s*)([\w:.-]+):\s*(.*)$")


def _taskfile(lines: list[str]) -> list[DeclaredTask]:
    """go-task's `tasks:` map: each task's name, and its first `cmds:` entry or `cmd:`."""
    tasks: list[DeclaredTask] = []
    indent = None
    inside = False
    for line in lines:
        m = _YAML_KEY.match(line)
        if m and not m.group(1):
            inside = m.group(2) == "tasks"
            continue
        if not inside or not line.strip():
            continue
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1))
            tasks.append(DeclaredTask(f"task {m.group(2)}", ""))
        elif tasks and not tasks[-1].command:
            command = re.sub(r"^-?\s*(?:cmd:\s*)?", "", line.strip()).strip("'\"")
            if command and not command.endswith(":"):
                tasks[-1] = DeclaredTask(tasks[-1].name, command)
    return tasks


_MIX_ALIAS = re.compile(r'^\s*"?([\w.:-]+)"?:\s*(\[.*|"[^"]*".*)$')


def _mix(lines: list[str]) -> list[DeclaredTask]:
    """`defp aliases do [setup: ["deps.get", …], test: [...]] end`: `mix <alias>`."""
    tasks: list[DeclaredTask] = []
    inside = False
    for line in lines:
        if "aliases do" in line:
            inside = True
            continue
        if inside and line.strip() == "end":
            break
        if inside and (m := _MIX_ALIAS.match(line)):
            tasks.append(DeclaredTask(f"mix {m.group(1)}", m.group(2).rstrip(",").strip()))
    return tasks


def _cargo(lines: list[str]) -> list[DeclaredTask]:
    """`.cargo/config.toml`'s `[alias]` table: `name = "build --release"` or a list of arguments."""
    tasks: list[DeclaredTask] = []
    for line in _in_tables(lines, "[alias]".__eq__):
        if m := re.match(r"^([\w-]+)\s*=\s*(.+)$", line):
            words = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)) or [m.group(2)]
            tasks.append(DeclaredTask(f"cargo {m.group(1)}", "cargo " + " ".join(words)))
    return tasks


_RUN_STEP = re.compile(r"^\s*(?:-\s*)?run:\s*(.+)$")
_STEP_NAME = re.compile(r"^\s*-\s*name:\s*(.+)$")


def _workflow(lines: list[str]) -> list[DeclaredTask]:
    """A CI workflow's `run:` steps, named by their step's `name:` when it has one."""
    tasks: list[DeclaredTask] = []
    name = ""
    for i, line in enumerate(lines):
        if m := _STEP_NAME.match(line):
            name = m.group(1).strip().strip("'\"")
        elif m := _RUN_STEP.match(line):
            command = m.group(1).strip()
            if command in ("|", ">", "|-", ">-"):  # a block: its first line says enough
                command = next((r.strip() for r in lines[i + 1 : i + 3] if r.strip()), "")
            tasks.append(DeclaredTask(name or "run", command.strip("'\"")))
            name = ""
    return tasks


# what each kind of manifest (cairn.project_files.MANIFESTS) declares, and its parser
_PARSERS: dict[str, tuple[str, Callable[[list[str]], list[DeclaredTask]]]] = {
    "package.json": ("scripts", _json_block("scripts")),
    "composer.json": ("scripts", _json_block("scripts")),
    "deno.json": ("tasks", _json_block("tasks")),
    "makefile": ("targets", _makefile),
    "justfile": ("recipes", _justfile),
    "mise": ("tasks", _mise),
    "pyproject": ("tasks", _pyproject),
    "taskfile": ("tasks", _taskfile),
    "mix": ("aliases", _mix),
    "cargo": ("aliases", _cargo),
    "workflow": ("CI steps", _workflow),
}


def declared_tasks(path: str, text: str) -> tuple[str, list[DeclaredTask]] | None:
    """What the file at `path` declares (its kind of task, the tasks), or None when it is no manifest."""
    if (kind := manifest_kind(path)) is None:
        return None
    what, parse = _PARSERS[kind]
    lines = [_LINE_NUMBER.sub("", ln) for ln in strip_headers(text).splitlines()]
    return what, parse(lines)[:MAX_TASKS]


# --- from a session ---------------------------------------------------------------------------------
def manifest_facts(events: Sequence[EventDoc], project_files: Sequence[ProjectFile] = ()) -> list[Candidate]:
    """One fact per manifest the session read and found tasks in (the last read of each path), and per
    manifest the capture hook sent from the repository. The hook's copy is the file as the session
    left it, so it stands for any read of the same file."""
    results = {e.tool_call_id: e for e in events if e.role is Role.TOOL_RESULT and e.tool_call_id}
    found: dict[str, tuple[str, list[DeclaredTask], int, int]] = {}
    for e in events:
        if e.role is not Role.TOOL_CALL or (result := results.get(e.tool_call_id or "")) is None:
            continue
        if result.is_error or not (path := _read_path(e)):
            continue
        if (declared := declared_tasks(path, result.text or "")) and declared[1]:
            found[path.replace("\\", "/")] = (*declared, e.line_no, result.last_line)
    for f in project_files:
        if (declared := declared_tasks(f.path, f.text)) and declared[1]:
            for read in [p for p, (_, tasks, _, _) in found.items() if _same_file(p, tasks, f, declared[1])]:
                del found[read]
            found[f.path] = (*declared, f.line_no, f.line_no)
    return [_fact(path, what, tasks, start, end) for path, (what, tasks, start, end) in found.items()]


def _same_file(
    read: str, tasks: list[DeclaredTask], sent: ProjectFile, sent_tasks: list[DeclaredTask]
) -> bool:
    """Whether a manifest the session read is the one the hook sent: the same path from the same root,
    or the same name declaring the same tasks (a read by a path relative to a sub-folder)."""
    if read == sent.path or (sent.root and read == f"{sent.root.rstrip('/')}/{sent.path}"):
        return True
    return read.rsplit("/", 1)[-1] == sent.path.rsplit("/", 1)[-1] and tasks == sent_tasks


def _read_path(e: EventDoc) -> str | None:
    """The file a call read: a read tool's path, or the one file a `cat`/`sed -n`/`head` printed."""
    if is_shell(e):
        command = command_of(e) or ""
        steps = core_steps(command)
        if "|" in command or len(steps) != 1:  # a filtered or chained output is not the file
            return None
        words = steps[0].split()
        if words[0] not in _PRINTERS:
            return None
        files = [w.strip("'\"") for w in words[1:] if not w.startswith("-")]
        files = [f for f in files if manifest_kind(f)]
        return files[0] if len(files) == 1 else None
    if (e.tool_name or "").lower() in READ_TOOLS and isinstance(e.tool_input, dict):
        path = (
            e.tool_input.get("file_path")
            or e.tool_input.get("path")
            or e.tool_input.get("absolute_path")
            or e.tool_input.get("filePath")  # OpenCode
        )
        return str(path) if path else None
    return None


def _fact(path: str, what: str, tasks: list[DeclaredTask], line_start: int, line_end: int) -> Candidate:
    shown = _short_path(path)
    lines = []
    for t in tasks:
        line = f"\n- {t.name}: `{t.command}`" if t.command else f"\n- {t.name}"
        lines.append(line if len(line) <= TASK_CHARS else line[: TASK_CHARS - 2] + "…`")
    content = f"{what.capitalize()} declared in {shown}:" + "".join(lines)  # the title says it: shown once
    return Candidate(
        kind=MemoryKind.FACT,
        title=f"{what.capitalize()} declared in {shown}",
        content=content[:FACT_CHARS],
        tags=["tasks", "manifest"],
        confidence=0.7,
        details={
            "source": "file",
            "path": shown,
            "tasks": [t.name for t in tasks],
            "about": f"tasks of {shown}",
        },
        line_start=line_start,
        line_end=line_end,
    )


def _short_path(path: str) -> str:
    """A manifest's path without the machine's directories: relative as the session gave it, else
    its folder and name (`frontend/package.json`), or from `.github/` for a workflow."""
    path = path.replace("\\", "/")
    if not path.startswith(("/", "~")):
        return path.removeprefix("./")
    if "/.github/" in path:
        return path[path.index("/.github/") + 1 :]
    return "/".join([p for p in path.split("/") if p][-2:])

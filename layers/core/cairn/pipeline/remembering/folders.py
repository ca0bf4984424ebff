"""The folders a project's sessions work in: a file read in any of them is the project's own.

A project often spans checkouts (an app and its server, a map and its MCP server): each session runs in
one and reads the others. A read outside the session's own folder is outside text (`trust.classify`)
until a session of the project is seen working in that folder; from then on what any of the project's
sessions read there is the project's own files (`trust.read_in`). So each session's folder is recorded
in its stats (`folders`), this session's memories are checked against the folders the project's other
sessions worked in, and when its folder is new to the project the earlier memories that read there are
checked too. Only the folder an agent ran in counts, never one it merely read or `cd`'d into: a clone of
someone else's code beside the project stays outside text.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import replace

from cairn.domain.errors import NotFound
from cairn.domain.models import Memory, MemoryFilter, Session, Source
from cairn.pipeline.deps import PipelineDeps, pipeline_principal
from cairn.services.memories import MemoryPatch
from cairn.services.trust import read_in

FOLDERS = "folders"  # the session stat that lists the folder it ran in
MAX_SESSIONS = 2_000  # of the project's sessions, the most recently updated, whose folders are read


def folder_of(cwd: str | None) -> str | None:
    """The folder a session ran in, as `trust.in_repository` compares paths; None when not absolute."""
    if not cwd:
        return None
    path = cwd.strip().replace("\\", "/")
    if not (path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] == "/")):
        return None
    return posixpath.normpath(path)


def settle_folders(deps: PipelineDeps, session: Session, cwd: str | None) -> int:
    """Record the session's folder and trust the project's reads of files in its folders; the number of
    memories whose sources changed.

    Two sessions of the project learned at the same moment, each in a folder new to it, may each list
    the project's folders before the other recorded its own. So the folders are listed again once this
    one is recorded and its memories checked: a folder that appeared meanwhile was recorded by a session
    whose own listing came after this session's record, and whose scan (for a folder new to the project)
    found this session's memories only if they were stored by then; this session checks its own against
    that folder itself. Of two records and two listings, one listing always comes after the other's
    record, so nothing is missed where a listing shows every record written before it (SQLite);
    DynamoDB lists a project's sessions through an index that may lag its writes by a moment, and that
    moment, not a whole session's learning, is what a race can still miss."""
    own = folder_of(cwd)
    if own is None or session.project is None:
        return 0
    deps.sessions.update(session.team_id, session.id, lambda s: _recorded(s, own))
    known = _project_folders(deps, session)
    theirs = known - {own}  # this session's reads there are the project's own files
    new = bool(known) and own not in known  # the others' reads here are, from now on
    changed = 0
    if theirs or new:  # else one folder (most projects): nothing to scan
        memories = _project_memories(deps, session) if new else _session_memories(deps, session)
        changed = _settle(deps, session, memories, theirs, (own,) if new else ())
    if later := _project_folders(deps, session) - known - {own}:
        changed += _settle(deps, session, _session_memories(deps, session), later, ())
    return changed


def _settle(
    deps: PipelineDeps, session: Session, memories: list[Memory], mine: Iterable[str], others: Iterable[str]
) -> int:
    """Trust, in `memories`, this session's reads of files in `mine` and the other sessions' reads in
    `others`; the number of memories whose sources changed."""
    mine, others = tuple(mine), tuple(others)
    caller, changed = pipeline_principal(session), 0
    for m in memories:
        folders = mine if m.provenance.session_id == session.id else others
        if folders and (sources := _trusted(m.provenance.sources, folders)) is not None:
            try:
                deps.memories.update(
                    caller, m.id, MemoryPatch(provenance=replace(m.provenance, sources=sources))
                )
            except NotFound:  # forgotten meanwhile
                continue
            changed += 1
    return changed


def _recorded(session: Session | None, folder: str) -> Session | None:
    if session is None or folder in session.stats.get(FOLDERS, ()):
        return None
    return replace(session, stats={**session.stats, FOLDERS: [*session.stats.get(FOLDERS, ()), folder]})


def _project_folders(deps: PipelineDeps, session: Session) -> frozenset[str]:
    """The folders the project's other sessions ran in."""
    found: set[str] = set()
    cursor, seen = None, 0
    while seen < MAX_SESSIONS:
        page = deps.sessions.list(session.team_id, session.project, limit=100, cursor=cursor)
        for other in page.items:
            if other.id != session.id:
                found.update(str(f) for f in other.stats.get(FOLDERS, ()) if isinstance(f, str))
        seen += len(page.items)
        cursor = page.next_cursor
        if not cursor or not page.items:
            break
    return frozenset(found)


def _project_memories(deps: PipelineDeps, session: Session) -> list[Memory]:
    """The project's memories that hold a tool's text: a scan of the team's, once per folder new to it."""
    flt = MemoryFilter(project=session.project, include_team_scope=False)
    return [m for m in deps.memory_repo.iter_team(session.team_id) if flt.admits(m) and m.provenance.sources]


def _session_memories(deps: PipelineDeps, session: Session) -> list[Memory]:
    """This session's memories that hold a tool's text (the stores index memories by session)."""
    flt = MemoryFilter(project=session.project, include_team_scope=False, session_id=session.id)
    found: list[Memory] = []
    cursor = None
    while True:
        page = deps.memory_repo.list(session.team_id, flt, limit=500, cursor=cursor)
        found.extend(m for m in page.items if m.provenance.sources)
        cursor = page.next_cursor
        if not cursor:
            return found


def _trusted(sources: tuple[Source, ...], folders: Iterable[str]) -> tuple[Source, ...] | None:
    """`sources` with each read of a file in `folders` trusted (and no longer a directive's cue), or
    None when none is."""
    folders = tuple(folders)
    trusted = tuple(replace(s, trusted=True, directive=None) if read_in(s, folders) else s for s in sources)
    return None if trusted == sources else trusted

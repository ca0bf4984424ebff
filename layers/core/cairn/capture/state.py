"""Per-session upload progress: bytes of the transcript already cut into parts, and the next part number.

Only whole lines are ever cut (a line still being written is left for the next call), so parts
concatenate back into the transcript exactly (plus the project-file lines a part may carry). The
state is written atomically after the part is safely in the spool: a crash in between re-cuts the
same part under the same number, which the server stores under the same key.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from cairn.atomic import write_atomic
from cairn.capture.paths import state_dir

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class SessionState:
    agent: str
    session_id: str
    transcript_path: str = ""
    project: str = ""
    offset: int = 0  # bytes of the (decompressed) transcript already in parts
    next_part: int = 1
    # bytes already in parts of each sub-agent transcript of the session, by file name
    subagent_offsets: dict[str, int] = field(default_factory=dict)
    project_files_digest: str = ""  # the repository manifests last sent with a part


def _path(agent: str, session_id: str):
    return state_dir() / f"{_UNSAFE.sub('_', agent)}__{_UNSAFE.sub('_', session_id)}.json"


def load(agent: str, session_id: str) -> SessionState:
    try:
        data = json.loads(_path(agent, session_id).read_text())
        return SessionState(**{k: data[k] for k in SessionState.__dataclass_fields__ if k in data})
    except (OSError, ValueError, TypeError):
        return SessionState(agent=agent, session_id=session_id)


def save(state: SessionState) -> None:
    path = _path(state.agent, state.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(asdict(state)))

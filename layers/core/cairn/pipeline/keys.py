"""Where stage outputs live: `<session prefix>stages/<stage>/<name>.json`, next to the transcript parts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from cairn.domain.errors import InvalidInput
from cairn.domain.models import Session
from cairn.services.uploads import parse_transcript_key, session_prefix


def prefix_of(session: Session) -> str:
    if not session.project:
        raise InvalidInput("a session without a project cannot be learned from", session_id=session.id)
    return session_prefix(session.team_id, session.project, session.id)


def stage_key(session: Session, stage: str, name: str) -> str:
    return f"{prefix_of(session)}stages/{stage}/{name}.json"


def stages_prefix(session: Session) -> str:
    return f"{prefix_of(session)}stages/"


def digest(items: Iterable[str], size: int = 16) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(item.encode())
        h.update(b"\x1f")
    return h.hexdigest()[:size]


def transcript_parts(keys: Iterable[str], session: Session) -> list[str]:
    """Transcript part keys of this session (its own prefix only), in part order."""
    prefix = prefix_of(session)
    parts = [(p.part, k) for k in keys if k.startswith(prefix) and (p := parse_transcript_key(k))]
    return [k for _, k in sorted(parts)]


def chunk_id_of(key: str) -> str:
    return key.rsplit("/", 1)[-1].removesuffix(".json")


def candidates_key(session: Session, chunk_key: str) -> str:
    """Where the extract stage keeps one chunk's candidates."""
    return stage_key(session, "extract", chunk_id_of(chunk_key))

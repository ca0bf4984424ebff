"""Open a session's transcript at a line span: what an excerpt or a memory's provenance points at.

Lines are numbered as the pipeline numbers them (the session's parts concatenated, 1-based), so an
excerpt's `lines` open exactly where it came from. The stored parts are already redacted by the hook;
each line is redacted again here (defence in depth) and cut to a readable length.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.domain.errors import InvalidInput, NotFound
from cairn.domain.models import KeyScope, Principal
from cairn.domain.ports import BlobStore, SessionRepository
from cairn.pipeline import keys as k
from cairn.pipeline.reading.parts import join_parts
from cairn.redaction import redact
from cairn.services.memories import require
from cairn.services.sessions import visible_session

MAX_LINES = 200  # one request's window
LINE_CHARS = 4_000  # one line as shown; the rest is cut with a note


@dataclass(frozen=True, slots=True)
class TranscriptLine:
    number: int
    text: str
    cut: bool = False


@dataclass(frozen=True, slots=True)
class TranscriptWindow:
    session_id: str
    agent: str
    project: str | None
    line_start: int
    line_end: int
    total_lines: int
    lines: tuple[TranscriptLine, ...]


class TranscriptReader:
    def __init__(self, sessions: SessionRepository, blobs: BlobStore) -> None:
        self._sessions = sessions
        self._blobs = blobs

    def window(
        self,
        caller: Principal,
        session_id: str,
        line_start: int,
        line_end: int | None = None,
        around: int = 0,
    ) -> TranscriptWindow:
        """Lines `line_start`..`line_end` (inclusive) widened by `around` on each side, at most MAX_LINES."""
        require(caller, KeyScope.READ)
        if line_start < 1 or (line_end is not None and line_end < line_start) or not 0 <= around <= 100:
            raise InvalidInput("lines must satisfy 1 <= line_start <= line_end, and 0 <= around <= 100")
        session = visible_session(caller, self._sessions, session_id)
        parts = k.transcript_parts(self._blobs.list(k.prefix_of(session) + "transcript-"), session)
        if not parts:
            raise NotFound(f"session {session_id} has no stored transcript")
        data, _ = join_parts(self._blobs, parts)
        raw_lines = data.decode("utf-8", "replace").splitlines()
        first = max(line_start - around, 1)
        last = min((line_end or line_start) + around, len(raw_lines), first + MAX_LINES - 1)
        lines = tuple(_line(n, raw_lines[n - 1]) for n in range(first, last + 1))
        return TranscriptWindow(
            session_id=session.id,
            agent=session.agent,
            project=session.project,
            line_start=first,
            line_end=max(last, first - 1),
            total_lines=len(raw_lines),
            lines=lines,
        )

    def lines(
        self, caller: Principal, session_id: str, line_start: int | None, line_end: int | None
    ) -> list[dict]:
        """The web UI's view: a window around the span (5 lines each side), as {"line", "text"}."""
        window = self.window(caller, session_id, line_start or 1, line_end, around=5)
        return [{"line": ln.number, "text": ln.text} for ln in window.lines]


def _line(number: int, raw: str) -> TranscriptLine:
    text = redact(raw).text
    if len(text) <= LINE_CHARS:
        return TranscriptLine(number, text)
    return TranscriptLine(number, text[:LINE_CHARS] + f"… [{len(text) - LINE_CHARS} more characters]", True)

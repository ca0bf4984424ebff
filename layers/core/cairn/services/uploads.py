"""Transcript uploads: hand out a presigned upload confined to the caller's team, then record what arrived.

A client (the capture hooks, `cairn ingest`) asks for an upload of one transcript *part* of one session;
parts are append-only slices of the agent's transcript, numbered from 1. The object key is built here,
from the caller's Principal and a slug of the project, never from a key the client sends, so a key of
one team can only ever write under `teams/<its team>/`. The session is recorded (or updated) when the
upload is granted; the part is added to it once the object is actually stored.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from cairn.domain.audit import AuditAction
from cairn.domain.errors import Conflict, InvalidInput
from cairn.domain.models import KeyScope, Principal, Session, utcnow
from cairn.domain.ports import BlobStore, SessionRepository, UploadTarget
from cairn.domain.vocabulary import SessionStatus
from cairn.services.audit import AuditTrail
from cairn.services.memories import require

TRANSCRIPT_CONTENT_TYPE = "application/gzip"
AGENTS = frozenset({"claude-code", "codex", "copilot-cli", "cursor", "gemini-cli", "opencode", "generic"})
MAX_PARTS = 10_000
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SLUG_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_PART_KEY = re.compile(
    r"^teams/(?P<team>[^/]+)/projects/(?P<slug>[^/]+)/sessions/(?P<session>[^/]+)/transcript-(?P<part>\d+)\.jsonl\.gz$"
)


@dataclass(frozen=True, slots=True)
class UploadRequest:
    agent: str
    session_id: str
    project: str
    part: int
    size: int
    content_type: str = TRANSCRIPT_CONTENT_TYPE
    started_at: datetime | None = None  # when the session ran, if it is uploaded after it ended


@dataclass(frozen=True, slots=True)
class TranscriptPart:
    """What an object key of a transcript part names."""

    team_id: str
    project_slug: str
    session_id: str
    part: int

    @property
    def session_prefix(self) -> str:
        return f"teams/{self.team_id}/projects/{self.project_slug}/sessions/{self.session_id}/"


def project_slug(project: str) -> str:
    """A readable, key-safe name for a project key, unique thanks to a short hash of the exact key."""
    readable = _SLUG_UNSAFE.sub("-", project.strip().lower()).strip("-.")[:60] or "project"
    digest = hashlib.sha256(project.strip().encode()).hexdigest()[:10]
    return f"{readable}-{digest}"


def session_prefix(team_id: str, project: str, session_id: str) -> str:
    return f"teams/{team_id}/projects/{project_slug(project)}/sessions/{session_id}/"


def transcript_key(team_id: str, project: str, session_id: str, part: int) -> str:
    return f"{session_prefix(team_id, project, session_id)}transcript-{part}.jsonl.gz"


def parse_transcript_key(key: str) -> TranscriptPart | None:
    m = _PART_KEY.match(key)
    if m is None:
        return None
    return TranscriptPart(m["team"], m["slug"], m["session"], int(m["part"]))


def check_session_id(session_id: str) -> None:
    if not _SESSION_ID.match(session_id or ""):
        raise InvalidInput("session_id must be 1-128 letters, digits, '.', '_' or '-'", session_id=session_id)


class UploadService:
    def __init__(
        self,
        blobs: BlobStore,
        sessions: SessionRepository,
        max_upload_bytes: int,
        url_ttl_s: int,
        clock: Callable[[], datetime] = utcnow,
        audit: AuditTrail | None = None,
    ) -> None:
        self._blobs = blobs
        self._sessions = sessions
        self._audit = audit or AuditTrail()
        self._max = max_upload_bytes
        self._ttl = url_ttl_s
        self._clock = clock

    def request_upload(self, caller: Principal, req: UploadRequest) -> UploadTarget:
        require(caller, KeyScope.WRITE)
        agent = req.agent.strip().lower()
        if agent not in AGENTS:
            raise InvalidInput(f"unknown agent {req.agent!r}", allowed=sorted(AGENTS))
        check_session_id(req.session_id)
        project = req.project.strip()
        if not project or len(project) > 300:
            raise InvalidInput("project must be 1-300 characters")
        caller.check_project(project)
        if not 1 <= req.part <= MAX_PARTS:
            raise InvalidInput(f"part must be between 1 and {MAX_PARTS}")
        if req.content_type != TRANSCRIPT_CONTENT_TYPE:
            raise InvalidInput(f"content_type must be {TRANSCRIPT_CONTENT_TYPE}", got=req.content_type)
        if not 1 <= req.size <= self._max:
            raise InvalidInput(f"bytes must be between 1 and {self._max}", limit=self._max)
        self._record_session(caller, agent, req.session_id, project, req.started_at)
        details = {"part": req.part, "bytes": req.size}
        self._audit.record(
            caller, AuditAction.UPLOAD, req.session_id, project=project, agent=agent, details=details
        )
        key = transcript_key(caller.team_id, project, req.session_id, req.part)
        return self._blobs.presign_upload(key, min(req.size, self._max), TRANSCRIPT_CONTENT_TYPE, self._ttl)

    def _record_session(
        self, caller: Principal, agent: str, session_id: str, project: str, ran: datetime | None = None
    ) -> Session:
        now = self._clock()
        # a session learned long after it ran (`cairn backfill`) is dated by when it ran, never in the future
        began = min(ran, now) if ran is not None and ran.tzinfo is not None else now

        def record(existing: Session | None) -> Session:
            if existing is None:
                return Session(
                    id=session_id,
                    team_id=caller.team_id,
                    project=project,
                    agent=agent,
                    member=caller.member,
                    started_at=began,
                    status=SessionStatus.RECEIVED,
                    updated_at=now,
                )
            if not caller.sees_session(existing):  # taken in a project this key does not reach: say no more
                raise Conflict("this session id is already in use", session_id=session_id)
            if existing.project != project:
                raise Conflict(
                    "this session was uploaded for another project",
                    session_id=session_id,
                    project=existing.project,
                )
            earliest = min(began, existing.started_at) if existing.started_at else began
            return replace(existing, started_at=earliest, updated_at=now)

        return self._sessions.update(caller.team_id, session_id, record)

    def part_stored(self, key: str) -> Session | None:
        """Record a stored transcript part on its session (the team comes from the key, which we signed)."""
        part = parse_transcript_key(key)
        if part is None:
            return None
        now = self._clock()

        def add_part(session: Session | None) -> Session | None:
            if session is None:
                return None
            keys = tuple(sorted(set(session.transcript_keys) | {key}, key=_part_number))
            # a new part means there is something new to learn, whatever the last run said
            return replace(
                session, transcript_keys=keys, ended_at=now, updated_at=now, status=SessionStatus.RECEIVED
            )

        session = self._sessions.update(part.team_id, part.session_id, add_part)
        if session is not None:  # the actor is whoever was granted the upload (the signed key says so)
            member = session.member or "unknown"
            details = {"part": _part_number(key), "stored": True}
            self._audit.record_as(
                part.team_id,
                member,
                "upload-grant",
                AuditAction.UPLOAD,
                session.id,
                session.project,
                session.agent,
                details,
            )
        return session

    def record_stored_parts(self, team_ids: Iterable[str]) -> int:
        """Record the parts a crash stored but never recorded (locally the PUT writes the part, then
        records it: a kill -9 in between left a `received` session with no part, which nothing would
        learn); returns how many sessions got parts. Run at local start-up, before learning resumes."""
        recovered = 0
        for team_id in team_ids:
            for session in list(self._sessions.iter_team(team_id)):
                if session.status != SessionStatus.RECEIVED or session.transcript_keys:
                    continue
                prefix = session_prefix(team_id, session.project or "", session.id) + "transcript-"
                keys = [key for key in self._blobs.list(prefix) if parse_transcript_key(key)]
                for key in keys:
                    self.part_stored(key)
                recovered += bool(keys)
        return recovered

    def expire_unsent(self, team_ids: Iterable[str], horizon: timedelta | None = None) -> int:
        """Fail the sessions of these teams that were granted an upload but never got a part (see
        `UnsentUploads`); returns how many. Run at local start-up (bootstrap)."""
        return UnsentUploads(self._sessions, self._blobs, self._ttl, self._clock).expire(team_ids, horizon)


class UnsentUploads:
    """Sessions granted an upload that never came are marked `failed`, saying why, once their last upload
    URL has expired (plus a grace for a PUT still in flight); without this they would stay `received`
    forever. Locally every session is looked at when the server starts; in AWS a scheduled Lambda looks
    at the sessions updated within `SWEEP_HORIZON` (newest first, so a run reads only recent ones).

    A part already stored but not yet recorded (in AWS the parse stage records it, after EventBridge and
    Step Functions; locally a crash between the write and the record) means the upload came: such a
    session is left to the pipeline."""

    def __init__(
        self,
        sessions: SessionRepository,
        blobs: BlobStore,
        url_ttl_s: int,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._sessions = sessions
        self._blobs = blobs
        self._ttl = url_ttl_s
        self._clock = clock

    def expire(self, team_ids: Iterable[str], horizon: timedelta | None = None) -> int:
        """Returns how many sessions were failed; `horizon` limits the look to sessions updated since."""
        now = self._clock()
        cutoff = now - timedelta(seconds=self._ttl) - UPLOAD_GRACE
        since = None if horizon is None else now - horizon
        expired = 0

        def fail(session: Session | None) -> Session | None:
            if session is None or not _never_sent(session, cutoff):
                return session  # a part arrived meanwhile: leave it to the pipeline
            stats = {**session.stats, "error": dict(UNSENT_ERROR)}
            return replace(session, status=SessionStatus.FAILED, stats=stats, updated_at=now)

        for team_id in team_ids:
            for session in self._sessions_since(team_id, since):
                if _never_sent(session, cutoff) and not self._part_stored(session):
                    after = self._sessions.update(team_id, session.id, fail)
                    expired += bool(after and after.status == SessionStatus.FAILED)
        return expired

    def _sessions_since(self, team_id: str, since: datetime | None) -> Iterator[Session]:
        if since is None:
            yield from list(self._sessions.iter_team(team_id))
            return
        cursor: str | None = None
        while True:  # most recently updated first: stop at the first one older than the horizon
            page = self._sessions.list(team_id, limit=100, cursor=cursor)
            for session in page.items:
                if session.updated_at < since:
                    return
                yield session
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def _part_stored(self, session: Session) -> bool:
        prefix = session_prefix(session.team_id, session.project or "", session.id)
        return bool(self._blobs.list(prefix + "transcript-"))


UPLOAD_GRACE = timedelta(minutes=5)
SWEEP_EVERY = timedelta(minutes=15)  # the AWS sweep's schedule (infra/units/pipeline.py) and a local server's
SWEEP_HORIZON = timedelta(days=1)  # sessions updated this recently are looked at: ~96 looks at each
UNSENT_ERROR = {
    "stage": "upload",
    "code": "upload_expired",
    "message": "no transcript part was uploaded before the upload URL expired",
    "details": {},
}


def _never_sent(session: Session, cutoff: datetime) -> bool:
    return (
        session.status == SessionStatus.RECEIVED
        and not session.transcript_keys
        and session.updated_at < cutoff
    )


def _part_number(key: str) -> int:
    part = parse_transcript_key(key)
    return part.part if part else 0

"""Learn a project's past sessions, oldest first, each as its own session: what `cairn backfill` runs.

A session found in an agent's store (`stores`, `stores_opencode`) is read whole, cut into the parts the
stop hook would have sent (`parts.session_parts`: redacted, gzipped, its sub-agents and worker threads as
further parts) and sent through the hooks' presigned uploads (`upload.upload_part`). The `Ledger` records
each part the server acknowledged, so a killed run resumes where it stopped and a second run sends nothing.
A session the server already has (the hooks saw it, or another machine sent it) is not sent again. Then,
unless told not to, the run waits until the pipeline has learned it before the next one goes, so sessions
are learned in the order they happened, in AWS too. A 429 (the team over its quota) is waited out, as the
server's `Retry-After` says; a server that cannot be reached is retried a few times, then the run stops,
its ledger ready for the next.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from cairn.capture import state
from cairn.capture.ledger import Ledger
from cairn.capture.parts import read_whole, session_parts
from cairn.capture.stores import (
    Project,
    Scan,
    StoredSession,
    agent_homes,
    continued,
    oldest_first,
    scan_claude,
    scan_codex,
    scan_copilot,
    scan_gemini,
)
from cairn.capture.stores_opencode import read_db_session, read_storage_session, scan_opencode
from cairn.capture.upload import OverQuota, UploadRefused, UploadUnavailable, upload_part
from cairn.domain.vocabulary import DONE_STATUSES

SCANNERS = {
    "claude-code": scan_claude,
    "codex": scan_codex,
    "gemini-cli": scan_gemini,
    "opencode": scan_opencode,
    "copilot-cli": scan_copilot,
}
QUOTA_WAIT_S = 30  # a 429 without Retry-After
ATTEMPTS = 5  # tries of one request to a server that cannot be reached, before the run stops
POLL_S = 0.5
HOOKED = frozenset({"claude-code", "codex", "gemini-cli", "copilot-cli"})  # the hooks cut these files


# --- finding -----------------------------------------------------------------------------------------
def scan(project: Project, home: Path | None = None, environ: Mapping[str, str] | None = None) -> Scan:
    """This project's sessions in every installed agent's store, oldest first."""
    homes = agent_homes(home or Path.home(), os.environ if environ is None else environ)
    found: list[StoredSession] = []
    foreign = 0
    present = tuple(agent for agent in SCANNERS if homes[agent].is_dir())
    for agent in present:
        mine, theirs = SCANNERS[agent](homes[agent], project)
        found += mine
        foreign += theirs
    return Scan(tuple(oldest_first(continued(found))), foreign, present)


def select(sessions: Sequence[StoredSession], since: float | None, last: int | None) -> list[StoredSession]:
    """Those from `since` on, then the newest `last` of them; oldest first."""
    chosen = [s for s in oldest_first(list(sessions)) if since is None or s.started >= since]
    return chosen[-last:] if last else chosen


def read_session(s: StoredSession) -> tuple[bytes, list[bytes]]:
    """The main transcript and the session's other files, as JSON lines."""
    if s.source == "opencode-db":
        return read_db_session(s.path, s.session_id), [read_db_session(s.path, c) for c in s.children]
    if s.source == "opencode-storage":
        return read_storage_session(s.path, s.session_id), [
            read_storage_session(s.path, c) for c in s.children
        ]
    return read_whole(s.path), [read_whole(p) for p in s.others]


# --- the server --------------------------------------------------------------------------------------
class Api:
    """What a backfill asks the server: the sessions it has, one session's status, and to store a part
    (the hooks' presigned upload)."""

    def __init__(self, url: str, key: str | None, transport: httpx.BaseTransport | None = None) -> None:
        self.url, self.key, self._transport = url.rstrip("/"), key, transport

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        try:
            with httpx.Client(base_url=self.url, headers=headers, timeout=30, transport=self._transport) as c:
                resp = c.get(path, params=params)
        except httpx.HTTPError as exc:
            raise UploadUnavailable(str(exc)) from exc
        if resp.status_code == 404:
            return None
        if resp.status_code == 429:
            from cairn.capture.quota import over_quota_line, retry_after_seconds

            wait = retry_after_seconds(resp.headers.get("Retry-After"))
            raise OverQuota(f"429: {over_quota_line(wait)}", wait)
        if resp.status_code == 408 or resp.status_code >= 500:
            raise UploadUnavailable(f"{resp.status_code}: {resp.text[:200]}")
        if resp.status_code >= 400:
            raise UploadRefused(f"{resp.status_code}: {resp.text[:200]}")
        return resp.json()

    def session(self, session_id: str) -> dict[str, Any] | None:
        return self._get(f"/v1/sessions/{session_id}")

    def known(self, project: str) -> set[str]:
        """The ids of the project's sessions the server already has (from the hooks, or another run)."""
        ids: set[str] = set()
        cursor = None
        while True:
            params = {"project": project, "limit": 200, **({"cursor": cursor} if cursor else {})}
            page = self._get("/v1/sessions", params) or {}
            ids |= {str(s["id"]) for s in page.get("items", [])}
            cursor = page.get("next_cursor")
            if not cursor:
                return ids

    def upload(self, s: StoredSession, project: str, part: int, data: bytes) -> None:
        upload_part(
            self.url,
            self.key,
            agent=s.agent,
            session_id=s.session_id,
            project=project,
            part=part,
            data=data,
            transport=self._transport,
            started_at=s.started or None,
        )


# --- learning ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Outcome:
    session: StoredSession
    # "learned", "sent" (not waited for), "known" (the server had it), "done" (an earlier run), "refused",
    # "skipped" (nothing to learn in it)
    how: str
    status: str = ""  # the session's pipeline status, when waited for
    stats: Mapping[str, Any] = field(default_factory=dict)
    detail: str = ""


class Events(Protocol):
    def sending(self, s: StoredSession, part: int, total: int) -> None: ...
    def waiting(self, seconds: float, why: str) -> None: ...
    def finished(self, outcome: Outcome) -> None: ...


def learn(
    plan: Sequence[tuple[StoredSession, str]],
    api: Api,
    ledger: Ledger,
    events: Events,
    *,
    wait_s: float = 600.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Outcome]:
    """Learn each (session, project) in order; returns what became of each."""
    known = {p: _patient(lambda p=p: api.known(p), events, sleep) for p in dict.fromkeys(p for _, p in plan)}
    outcomes = []
    for s, project in plan:
        outcome = _learn_one(s, project, known[project], api, ledger, events, wait_s, sleep)
        events.finished(outcome)
        outcomes.append(outcome)
    return outcomes


def _learn_one(
    s: StoredSession,
    project: str,
    known: set[str],
    api: Api,
    ledger: Ledger,
    events: Events,
    wait_s: float,
    sleep: Callable[[float], None],
) -> Outcome:
    """One session: skipped when done before or already on the server, else sent from its first part
    the server has not acknowledged, then (when waiting) followed until it is learned."""
    entry = ledger.get(s.key)
    if entry is not None and entry.done:
        return Outcome(s, "done", detail=entry.how)
    if entry is None and s.session_id in known:
        ledger.done(s.key, "known")
        return Outcome(s, "known")
    main, others = read_session(s)
    unfit = _unfit(s, main)
    if unfit:
        ledger.done(s.key, unfit)
        return Outcome(s, "skipped", detail=unfit)
    parts = session_parts(main, others, s.cwd).parts
    if entry is None:
        ledger.begin(s.key, len(parts))
    start = entry.parts + 1 if entry is not None else 1
    for number in range(start, len(parts) + 1):
        events.sending(s, number, len(parts))
        data = parts[number - 1].data
        try:
            _patient(lambda n=number, d=data: api.upload(s, project, n, d), events, sleep)
        except UploadRefused as exc:
            ledger.done(s.key, f"refused: {exc}")
            return Outcome(s, "refused", detail=str(exc))
        ledger.ack(s.key, number)
    ledger.done(s.key)
    _hand_to_hooks(s, project, main, others, len(parts))
    if wait_s <= 0:
        return Outcome(s, "sent")
    session = _wait_learned(api, s.session_id, wait_s, events, sleep)
    status = str(session.get("status") or "") if session else ""
    return Outcome(
        s, "learned" if status in DONE_STATUSES else "sent", status, (session or {}).get("stats") or {}
    )


def _unfit(s: StoredSession, main: bytes) -> str:
    """Why a transcript is not sent, as `cairn ingest` would refuse it; empty when it is fit."""
    from cairn.domain.errors import InvalidInput, PayloadTooLarge
    from cairn.transcripts import parse_transcript

    try:
        parsed = parse_transcript(main, s.agent, s.path.name)
    except (InvalidInput, PayloadTooLarge) as exc:
        return exc.message
    return "" if parsed.events else "no conversation to learn from"


def _patient(call: Callable[[], Any], events: Events, sleep: Callable[[float], None]) -> Any:
    """The call, waited out through 429s (as long as the server says) and retried a few times when the
    server cannot be reached; UploadUnavailable once it still cannot."""
    tries = 0
    while True:
        try:
            return call()
        except OverQuota as exc:
            wait = exc.retry_after if exc.retry_after is not None else QUOTA_WAIT_S
            events.waiting(wait, str(exc))
            sleep(wait)
        except UploadUnavailable as exc:
            tries += 1
            if tries >= ATTEMPTS:
                raise
            wait = min(2.0**tries, 30.0)
            events.waiting(wait, str(exc))
            sleep(wait)


def _wait_learned(
    api: Api, session_id: str, wait_s: float, events: Events, sleep: Callable[[float], None]
) -> dict[str, Any] | None:
    deadline = time.monotonic() + wait_s
    session = None
    while time.monotonic() < deadline:
        session = _patient(lambda: api.session(session_id), events, sleep)
        if session is None or session.get("status") in DONE_STATUSES:
            return session
        sleep(POLL_S)
    return session


def _hand_to_hooks(s: StoredSession, project: str, main: bytes, others: list[bytes], parts: int) -> None:
    """Tell the capture hooks what was sent, so a session resumed later goes on from there (its new
    lines as the next part) instead of being sent again whole. Only where no hook has seen it."""
    if s.agent not in HOOKED or s.source != "file" or state.load(s.agent, s.session_id).project:
        return
    subagents = {
        p.name: len(data) for p, data in zip(s.others, others, strict=False) if p.parent.name == "subagents"
    }
    state.save(
        state.SessionState(
            agent=s.agent,
            session_id=s.session_id,
            transcript_path=str(s.path),
            project=project,
            offset=main.rfind(b"\n") + 1,
            next_part=parts + 1,
            subagent_offsets=subagents,
        )
    )

"""Local orchestration: run the stages of a session in order, in one background worker thread.

Uploads call `start` after the transcript is stored, so a crash or a failed stage never loses it:
the session is marked failed with the reason and `cairn reprocess` runs it again; sessions a stopped
server left unfinished are queued again when `cairn serve` starts. One worker thread
runs sessions one after another (the stages are CPU-bound and the machine is shared); a part that
arrives while its session is being learned queues the session again.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

from cairn.domain.audit import in_request
from cairn.domain.ids import new_id
from cairn.domain.ports import TeamRepository
from cairn.domain.vocabulary import UNFINISHED_STATUSES, SessionStatus
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import ExtractInput, SessionRef
from cairn.pipeline.running.log_lines import learned_line
from cairn.pipeline.stages.consolidate import consolidate
from cairn.pipeline.stages.dream import dream_session
from cairn.pipeline.stages.ingest import chunk, extract, parse
from cairn.pipeline.stages.reflect import reflect
from cairn.pipeline.stages.status import failure, finish, mark

log = logging.getLogger(__name__)


def run_stages(deps: PipelineDeps, ref: SessionRef) -> dict[str, Any]:
    """Every stage in order; returns stats per stage. Raises with `.stage` set on the first failure."""
    stats: dict[str, Any] = {}
    stage = "parse"
    try:
        parsed = parse(deps, ref)
        stats["parse"] = {"parts": parsed.parts, "events": parsed.events}
        stage = "chunk"
        chunked = chunk(deps, parsed)
        stats["chunk"] = {"chunks": len(chunked.chunk_keys)}
        stage = "extract"
        extracted = [extract(deps, ExtractInput(**ref.ref(), chunk_key=key)) for key in chunked.chunk_keys]
        stats["extract"] = {
            "candidates": sum(e.candidates for e in extracted),
            "extractors": sorted({e.extractor for e in extracted}),
            "queued_for_llm": sum(e.queued_for_llm for e in extracted),
        }
        stage = "consolidate"
        done = consolidate(deps, chunked)
        stats["consolidate"] = done.model_dump(
            include={"created", "merged", "superseded", "relations", "promoted", "excerpts", "excerpt_chars"}
        )
        stage = "reflect"
        reflected = reflect(deps, done)
        stats["reflect"] = reflected.model_dump(include={"reflection_id", "handoff_id", "procedures"})
    except BaseException as exc:
        exc.stage = stage  # type: ignore[attr-defined]
        raise
    stats["dream"] = _dream(deps, ref)
    return stats


def _dream(deps: PipelineDeps, ref: SessionRef) -> dict[str, Any]:
    """The project's dream pass: what the session taught is kept whatever becomes of it (a pass that
    fails is logged, and the scheduled pass does the work, its watermark not moved)."""
    try:
        return dict(dream_session(deps, ref))
    except Exception as exc:
        log.warning("the dream pass after session %s failed: %s", ref.session_id, exc, exc_info=True)
        return {"error": str(exc)[:200]}


class InlinePipelineRunner:
    def __init__(self, deps: PipelineDeps) -> None:
        self.deps = deps
        self._queue: queue.Queue[SessionRef | None] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pending: set[tuple[str, str]] = set()
        self._idle = threading.Condition(self._lock)
        self._busy = 0

    def start(self, team_id: str, session_id: str, force: bool = False) -> None:
        """Queue a session for learning; returns at once."""
        with self._lock:
            if (team_id, session_id) in self._pending and not force:
                return
            self._pending.add((team_id, session_id))
            self._busy += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="cairn-pipeline", daemon=True)
                self._thread.start()
        self._queue.put(SessionRef(team_id=team_id, session_id=session_id, force=force))

    def run(self, team_id: str, session_id: str, force: bool = False):
        """Learn from a session now, in this thread; returns the session with its final status."""
        ref = SessionRef(team_id=team_id, session_id=session_id, force=force)
        before = mark(self.deps, ref, SessionStatus.PROCESSING)
        if before is None:
            return None
        try:
            with in_request(new_id("run")):  # one request id for the audit entries of this run
                stats = run_stages(self.deps, ref)
        except Exception as exc:
            stage = getattr(exc, "stage", "pipeline")
            log.warning(
                "learning from session %s failed in %s: %s",
                session_id,
                stage,
                exc,
                exc_info=not hasattr(exc, "code"),
            )
            return mark(self.deps, ref, SessionStatus.FAILED, error=failure(stage, exc))
        after = finish(self.deps, ref, before.transcript_keys, **stats, error=None)
        if after is not None:
            log.info(learned_line(after))
        if after is not None and after.status == SessionStatus.RECEIVED:
            self.start(team_id, session_id)  # a part arrived meanwhile: learn again with it
        return after

    def resume_unfinished(self, teams: TeamRepository) -> int:
        """Queue every session a stopped server left `received` or `processing` (with a stored part),
        so a restart picks learning up where it was cut off; returns how many were queued."""
        queued = 0
        for team in teams.list_teams():
            for session in self.deps.sessions.iter_team(team.id):
                if session.status in UNFINISHED_STATUSES and session.transcript_keys:
                    self.start(team.id, session.id)
                    queued += 1
        return queued

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until every queued session has been processed (tests, `--wait` in-process)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the worker after the session it is learning (the store is closed right after)."""
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def _work(self) -> None:
        while True:
            ref = self._queue.get()
            if ref is None:
                return
            with self._lock:
                self._pending.discard((ref.team_id, ref.session_id))
            try:
                self.run(ref.team_id, ref.session_id, ref.force)
            except Exception:  # never let one session stop the worker
                log.exception("pipeline worker error on session %s", ref.session_id)
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()

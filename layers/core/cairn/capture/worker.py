"""The capture worker: turn hook requests into spooled parts, then deliver the spool.

Run detached by the hooks (`python -m cairn.capture.worker`). Workers take an exclusive lock on the
capture dir, so two never cut the same session at once; a worker that arrives while another runs
waits its turn (bounded), then finds little or nothing left to do. Each request becomes at most one
new part: the whole lines written to the transcript since the last part, secrets redacted, gzipped;
the repository's manifests (`cairn.project_files`) ride along when they changed since the last part.
"""

from __future__ import annotations

import fcntl
import json
import logging
import sys
import time
from pathlib import Path

from cairn import project_files
from cairn.capture import queue, state
from cairn.capture.locate import locate, read_from
from cairn.capture.paths import capture_dir, lock_path, log_path, requests_dir
from cairn.capture.subagents import subagent_files
from cairn.capture.upload import prepare
from cairn.userdirs import server_and_key

log = logging.getLogger("cairn.capture")
LOCK_WAIT_S = 60.0
MAX_PART_BYTES = 48 * 1024 * 1024  # below the server's default 64 MB cap, after gzip with room to spare
MAX_LOG_BYTES = 1_048_576


def cut_part(request: dict) -> queue.SpooledPart | None:
    """Spool the transcript's new whole lines as the session's next part; None when nothing is new."""
    agent = request.get("agent") or "claude-code"
    found = locate(
        agent, request.get("transcript_path") or "", request.get("session_id") or "", request.get("cwd") or ""
    )
    if found is None:
        log.info("no transcript for %s session %r", agent, request.get("session_id"))
        return None
    session_id = found.session_id or request.get("session_id") or found.path.stem
    st = state.load(agent, session_id)
    if st.transcript_path and st.transcript_path != str(found.path):
        log.info("session %s moved to %s", session_id, found.path)
    data = read_from(found.path, st.offset)
    if not data and found.path.stat().st_size < st.offset:
        st.offset, data = 0, read_from(found.path, 0)  # rewritten from scratch: start over
    end = data.rfind(b"\n", 0, MAX_PART_BYTES) + 1  # whole lines only; a line being written waits
    if end <= 0:
        if st.project:  # the session has a first part: its sub-agents may have written since
            _cut_subagents(agent, session_id, found.path, st)
        return None
    if not st.project:
        from cairn.projects import project_key

        st.project = project_key(found.cwd or request.get("cwd") or ".")
    files = project_files.collect(found.cwd or request.get("cwd") or "")
    sent = project_files.digest(files) if files else ""
    extra = project_files.to_jsonl(files) if sent != st.project_files_digest else b""
    prepared = prepare(data[:end] + extra)
    item = queue.spool(agent, session_id, st.project, st.next_part, prepared.data)
    if prepared.redactions:
        log.info("redacted %s in %s part %d", prepared.redactions, session_id, st.next_part)
    st.transcript_path = str(found.path)
    st.offset += end
    st.next_part += 1
    st.project_files_digest = sent
    state.save(st)
    _cut_subagents(agent, session_id, found.path, st)
    return item


def _cut_subagents(agent: str, session_id: str, transcript: Path, st: state.SessionState) -> None:
    """New whole lines of each sub-agent transcript, as further parts of the same session."""
    for path in subagent_files(transcript):
        offset = st.subagent_offsets.get(path.name, 0)
        data = read_from(path, offset)
        end = data.rfind(b"\n", 0, MAX_PART_BYTES) + 1
        if end <= 0:
            continue
        queue.spool(agent, session_id, st.project, st.next_part, prepare(data[:end]).data)
        st.subagent_offsets[path.name] = offset + end
        st.next_part += 1
        state.save(st)


def process_requests() -> int:
    """Cut a part for every queued request (oldest first); a request leaves the queue once handled."""
    folder = requests_dir()
    if not folder.is_dir():
        return 0
    cut = 0
    for path in sorted(folder.glob("*.json")):
        try:
            request = json.loads(path.read_text())
            if isinstance(request, dict) and cut_part(request) is not None:
                cut += 1
        except Exception:  # a bad request must not block the ones behind it
            log.exception("capture request %s failed", path.name)
        path.unlink(missing_ok=True)
    return cut


def run(lock_wait_s: float = LOCK_WAIT_S) -> int:
    """One worker pass under the capture lock; returns 0. Used by the detached process."""
    capture_dir().mkdir(parents=True, exist_ok=True)
    _setup_logging()
    with lock_path().open("a") as lock:
        if not _acquire(lock, lock_wait_s):
            return 0
        try:
            process_requests()
            url, key = server_and_key()  # as the CLI resolves them
            delivered, left = queue.deliver(url, key)
            log.info("delivered %d parts, %d left", delivered, left)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return 0


def _acquire(lock, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)


def _setup_logging() -> None:
    path: Path = log_path()
    if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
        path.write_text("")
    if not log.handlers:
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


if __name__ == "__main__":
    try:
        sys.exit(run())
    except Exception:  # noqa: BLE001 - detached: nobody reads a traceback; the spool keeps the data
        log.exception("capture worker failed")
        sys.exit(0)

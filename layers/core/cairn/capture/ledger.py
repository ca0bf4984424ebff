"""What `cairn backfill` has had acknowledged by the server, kept on disk so a killed run loses nothing.

One small JSON file per server under `<cairn home>/capture/backfill/`, replaced atomically and
fsynced (`atomic.write_atomic(durable=True)`) each time it changes: before a session's first part is sent
(`begin`), after each part the server confirmed (`ack`), when all are (`done`). A run killed at any moment,
a reboot included, therefore finds every session either not begun, begun with its first `parts` parts
stored, or done; it sends again at most the one part in flight, under the same key and with the same bytes,
which the server stores once.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from cairn.atomic import write_atomic
from cairn.capture.paths import capture_dir

VERSION = 1


@dataclass(frozen=True, slots=True)
class Entry:
    parts: int = 0  # parts the server acknowledged, from part 1
    total: int = 0
    done: bool = False
    how: str = ""  # "sent" by this command, "known" (the server had it already), "refused: <why>"
    at: float = 0.0


def ledger_path(url: str) -> Path:
    digest = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return capture_dir() / "backfill" / f"{digest}.json"


class Ledger:
    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self._head = {"version": VERSION, "url": url}
        self._entries: dict[str, Entry] = {}
        try:
            doc = json.loads(path.read_text())
            raw = doc.get("sessions", {}) if isinstance(doc, dict) else {}
            self._entries = {
                k: Entry(**{f: v[f] for f in Entry.__dataclass_fields__ if f in v}) for k, v in raw.items()
            }
        except (OSError, ValueError, TypeError, AttributeError):
            self._entries = {}

    @classmethod
    def for_server(cls, url: str) -> Ledger:
        return cls(ledger_path(url), url)

    def get(self, key: str) -> Entry | None:
        return self._entries.get(key)

    def begin(self, key: str, total: int) -> None:
        self._put(key, Entry(0, total, False, "sent", time.time()))

    def ack(self, key: str, part: int) -> None:
        entry = self._entries[key]
        self._put(key, Entry(max(entry.parts, part), entry.total, False, entry.how, time.time()))

    def done(self, key: str, how: str = "sent") -> None:
        entry = self._entries.get(key) or Entry()
        self._put(key, Entry(entry.total or entry.parts, entry.total, True, how, time.time()))

    def _put(self, key: str, entry: Entry) -> None:
        self._entries[key] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = {**self._head, "sessions": {k: asdict(v) for k, v in self._entries.items()}}
        write_atomic(self.path, json.dumps(doc, indent=1), durable=True)

"""What `cairn backfill` shows while it learns: what each session taught, the count and the time left; a
429 reads as waiting, never as a failure."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from cairn.capture.backfill import Outcome
from cairn.capture.stores import StoredSession
from cairn.cli import backfill
from rich.console import Console

pytestmark = pytest.mark.unit


def session(n: int, size: int = 1000) -> StoredSession:
    return StoredSession("codex", f"s-{n}", Path(f"/x/{n}.jsonl"), 1_780_000_000 + n, size)


def learned(s: StoredSession) -> Outcome:
    return Outcome(s, "learned", "learned", {"consolidate": {"created": 2, "merged": 1}})


def test_on_a_pipe_each_session_is_a_line_with_what_it_taught_the_count_and_the_eta(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(backfill, "out", Console(file=screen, force_terminal=False, width=200))
    monkeypatch.setattr(backfill, "err", Console(file=io.StringIO(), force_terminal=False))
    plan = [(session(1), "p"), (session(2), "p")]
    shown = backfill.Shown(plan)
    shown.finished(learned(plan[0][0]))
    shown.finished(Outcome(plan[1][0], "known"))
    shown.stop()
    lines = screen.getvalue().splitlines()
    assert re.fullmatch(
        r"learned 2026-05-28 \d\d:\d\d codex s-1: \+2 new, ~1 merged  \(1/2, ETA \d:\d\d:\d\d\)", lines[0]
    )
    assert lines[1].startswith("already learned 2026-05-28") and lines[1].endswith("(2/2, ETA 0:00:00)")


def test_on_a_terminal_it_is_a_bar_with_the_count_and_eta(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(backfill, "err", Console(file=screen, force_terminal=True, width=120))
    plan = [(session(1), "p"), (session(2), "p")]
    shown = backfill.Shown(plan)
    shown.sending(plan[0][0], 1, 2)
    shown.finished(learned(plan[0][0]))
    shown.stop()
    text = screen.getvalue()
    assert "1/2" in text and "ETA" in text and "learned" in text


def test_a_429_is_shown_as_waiting(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(backfill, "err", Console(file=screen, force_terminal=False, width=200))
    shown = backfill.Shown([(session(1), "p")])
    shown.waiting(7, "429: over quota, retry after 7 s")
    text = screen.getvalue()
    assert text.startswith("waiting 7 s: 429: over quota") and "fail" not in text and "error" not in text

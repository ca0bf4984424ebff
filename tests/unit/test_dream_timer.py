"""`cairn serve`'s dream timer: the pass every period until the server stops; a failed pass is logged and
the next one runs."""

from __future__ import annotations

import threading

import pytest
from cairn.cli.serve_cmds import _dream_every

pytestmark = pytest.mark.unit


def test_the_serve_timer_runs_the_pass_every_period_and_a_failed_pass_does_not_stop_it():
    calls: list[int] = []
    stop = threading.Event()

    def dream() -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the store was busy")
        if len(calls) == 3:
            stop.set()
        return {"projects": 1, "folded": 2}

    _dream_every(dream, stop, 0.01)
    assert len(calls) == 3


def test_a_stopped_server_runs_no_pass():
    stop = threading.Event()
    stop.set()
    _dream_every(lambda: pytest.fail("no pass after stop"), stop, 0.01)

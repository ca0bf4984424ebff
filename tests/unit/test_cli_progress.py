"""Long CLI work shows how far it is, how fast it goes and when it will end."""

import re

import pytest
from cairn.cli import admin

pytestmark = pytest.mark.unit


def test_progress_on_a_pipe_prints_a_line_with_rate_and_eta_each_time_it_passes_a_multiple_of_every(
    capsys, monkeypatch
):
    from rich.console import Console

    monkeypatch.setattr(admin, "err", Console(stderr=True, highlight=False, force_terminal=False))
    shown = admin.ReindexProgress("reindexing", "memories", every=100)
    shown.start(0, 400)
    for n in (60, 60, 30, 200, 50):
        shown.add(n)
    shown.stop()
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "reindexing: 120/400 memories",
        "reindexing: 350/400 memories",
        "reindexing: 400/400 memories",
    ]
    assert all(re.search(r", \d+/s, ETA \d+:\d\d:\d\d$", line) for line in lines)


def test_a_resumed_run_says_how_much_was_done_before(capsys, monkeypatch):
    from rich.console import Console

    monkeypatch.setattr(admin, "err", Console(stderr=True, highlight=False, force_terminal=False))
    admin.ReindexProgress("re-embedding").start(512, 1000)
    assert "re-embedding: resuming, 512 memories done before" in capsys.readouterr().err


def test_on_a_terminal_progress_is_a_bar_with_eta(monkeypatch):
    import io

    from rich.console import Console

    screen = io.StringIO()
    monkeypatch.setattr(admin, "err", Console(file=screen, force_terminal=True, width=120))
    shown = admin.ReindexProgress("re-embedding")
    shown.start(0, 100)
    shown.add(50)
    shown.stop()
    text = screen.getvalue()
    assert "re-embedding" in text and "50/100" in text and "ETA" in text

"""Long CLI work prints its counts as it goes."""

import pytest
from cairn.cli import admin

pytestmark = pytest.mark.unit


def test_progress_count_prints_a_line_each_time_it_passes_a_multiple_of_every(capsys, monkeypatch):
    from rich.console import Console

    monkeypatch.setattr(admin, "err", Console(stderr=True, highlight=False, force_terminal=False))
    counted = admin.ProgressCount("reindexing", "memories", every=100)
    for n in (60, 60, 30, 200):
        counted.add(n)
    assert capsys.readouterr().err.splitlines() == [
        "reindexing: 120 memories…",
        "reindexing: 350 memories…",
    ]

"""The lint limits CI enforces: CI runs the default test run, so ruff's complexity rule runs here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (it comes with the dev extra)")
    return [found]


def test_no_function_is_more_complex_than_the_limit_in_pyproject():
    done = subprocess.run(
        [*_ruff(), "check", "--select", "C901", "--output-format", "concise", "layers", "functions", "infra"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr

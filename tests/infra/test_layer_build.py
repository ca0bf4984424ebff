"""The real layer build (PyPI, no Docker) fits Lambda's 250 MB unzipped limit with the largest function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.infra, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
LIMIT = 250 * 1024 * 1024


def _pypi_reachable(tmp: Path) -> bool:
    probe = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
            "--dest",
            str(tmp),
            "--only-binary=:all:",
            "six==1.17.0",
        ],
        capture_output=True,
        timeout=60,
    )
    return probe.returncode == 0


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def test_layer_builds_without_docker_and_fits_with_the_largest_function(tmp_path):
    if not _pypi_reachable(tmp_path / "probe"):
        pytest.skip("PyPI is not reachable: the layer build needs it")
    out = tmp_path / "layer"
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_layer.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    site = out / "python"
    assert (site / "cairn" / "__init__.py").is_file()
    assert (site / "pynamodb").is_dir() and (site / "onnxruntime").is_dir()
    assert not list(site.rglob("__pycache__"))

    layer_bytes = _size(out)
    functions = (
        [p for p in (REPO / "functions").iterdir() if p.is_dir()] if (REPO / "functions").is_dir() else []
    )
    largest_function = max((_size(p) for p in functions), default=0)
    total = layer_bytes + largest_function
    print(f"layer {layer_bytes / 2**20:.1f} MB + largest function {largest_function / 2**20:.2f} MB")
    assert total < LIMIT, f"{total / 2**20:.1f} MB >= 250 MB"

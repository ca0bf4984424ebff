"""The repository stands on its own: tests and benchmarks read nothing outside the clone, the benchmark data
they ship carries its licence, and that data stays out of the package and the Lambda layer."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.paths import REPO

SCANNED = ("tests", "benchmarks", "scripts", "localstack")
_PARENTS = re.compile(r"Path\(__file__\)\.resolve\(\)\.parents\[(\d+)\]")
# where the campaign found the suite reaching: the sibling folder of shared material beside the clone, or
# an absolute path of this machine's workspace (spelt as patterns, so this file does not name them)
_OUTSIDE = re.compile(r"""["'](?:\.\./)+(?:shared)\b|["']/(?:work)/""")


def _sources() -> list[Path]:
    return [
        p
        for top in SCANNED
        for p in (REPO / top).rglob("*")
        if p.suffix in (".py", ".sh") and "fixtures" not in p.parts and ".venv" not in p.parts
    ]


def test_every_path_a_test_or_benchmark_climbs_to_stays_inside_the_clone():
    sources = _sources()
    assert len(sources) > 50
    for path in sources:
        text = path.read_text(errors="replace")
        for n in _PARENTS.findall(text):
            assert path.resolve().parents[int(n)].is_relative_to(REPO), f"{path}: parents[{n}]"
        assert not _OUTSIDE.search(text), f"{path} names a path outside the clone"


def test_each_benchmark_data_set_ships_with_its_source_or_licence():
    sets = [d for d in (REPO / "benchmarks" / "data").iterdir() if d.is_dir()]
    assert sets
    for data in sets:
        assert {"SOURCE.md", "LICENSE.md", "LICENSE"} & {p.name for p in data.iterdir()}, data
    # a folder of several sets: each set's sessions carry their own source too
    for sessions in (REPO / "benchmarks" / "data").glob("*/*/sessions"):
        assert (sessions / "SOURCE.md").is_file(), sessions


def test_benchmark_data_and_fixtures_stay_out_of_the_package_and_the_layer():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["layers/core"]
    layer_script = (REPO / "scripts" / "build_layer.py").read_text()
    assert 'CORE_PACKAGE = REPO_ROOT / "layers" / "core" / "cairn"' in layer_script
    shipped = {p.name for p in (REPO / "layers" / "core").rglob("*") if p.is_file()}
    data = {p.name for p in (REPO / "benchmarks" / "data").rglob("*.json")}
    fixtures = {p.name for p in (REPO / "tests" / "fixtures").rglob("*.jsonl")}
    assert not shipped & (data | fixtures)

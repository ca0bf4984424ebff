"""The running venv is the locked toolchain: a stray venv (made before a pin moved, or upgraded by hand) fails
here instead of passing or failing the rest of the suite by accident.

The emulators decide what the AWS tests prove (moto's IAM enforcement changed between 5.2.5 and 5.2.6), so
they must be installed, at their pins; every other pinned package that is installed must match too.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
EMULATORS = ("moto", "osmem-server")


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)==([^\s;#]+).*", line)
        if match:
            pins[_canonical(match[1])] = match[2]
    return pins


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_the_emulators_are_installed_at_the_versions_the_lock_names():
    pins = _pins(REPO / "constraints.txt")
    for name in EMULATORS:
        assert name in pins, f"constraints.txt does not pin {name}"
        assert _installed(name) == pins[name], (
            f"{name} {_installed(name)} is installed, the lock says {pins[name]}: "
            "reinstall with `pip install -c constraints.txt -e '.[dev]'`"
        )


def test_every_installed_package_the_lock_pins_is_at_its_pin():
    drift = {
        name: (version, pin)
        for name, pin in _pins(REPO / "constraints.txt").items()
        if (version := _installed(name)) is not None and version != pin
    }
    assert not drift, "installed ≠ locked (name: installed, pin): " + ", ".join(
        f"{n}: {v}, {p}" for n, (v, p) in sorted(drift.items())
    )


def _stack_pin(name: str) -> str:
    match = re.search(rf'^{name} = "([^"]+)"', (REPO / "localstack" / "stack.py").read_text(), re.M)
    assert match, f"localstack/stack.py names no {name}"
    return match[1]


def test_the_localstack_stack_pins_its_emulators_as_the_locks_do_and_its_venv_matches_when_it_exists():
    pins = {
        **_pins(REPO / "localstack" / "constraints.txt"),
        "localstack-core": _stack_pin("LOCALSTACK_VERSION"),
    }
    assert (
        _stack_pin("OSMEM_VERSION") == pins["osmem-server"] == _pins(REPO / "constraints.txt")["osmem-server"]
    ), "stack.py, localstack/constraints.txt and constraints.txt name different osmem-server versions"
    venv = REPO / ".localstack" / "venv"
    found = {
        _canonical(name): version
        for d in venv.glob("lib/python*/site-packages/*.dist-info")
        for name, version in [d.name.removesuffix(".dist-info").rsplit("-", 1)]
    }
    if not found:
        pytest.skip("no LocalStack venv here yet (localstack/stack.py up makes it)")
    for name in ("localstack-core", "osmem-server", "moto-ext"):
        assert found.get(name) == pins[name], (
            f"{name} {found.get(name)} in .localstack/venv, the lock says {pins[name]}"
        )

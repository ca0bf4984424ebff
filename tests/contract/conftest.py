"""Parametrizes each port fixture over every adapter registered in tests/contract/registry.py."""

import importlib

import pytest

from tests.contract.registry import PORTS, PROVIDERS

for _module in ("adapters_local", "adapters_search_local", "adapters_aws"):
    try:
        importlib.import_module(f"tests.contract.{_module}")
    except ModuleNotFoundError as exc:  # an adapter family whose optional dependencies are not installed
        if exc.name and exc.name.startswith("tests.contract"):
            continue
        raise


def pytest_generate_tests(metafunc):
    for port in PORTS:
        if port in metafunc.fixturenames:
            names = sorted(PROVIDERS[port])
            metafunc.parametrize(port, names, indirect=True, ids=names)


def _provided(request):
    with PROVIDERS[request.fixturename][request.param]() as adapter:
        yield adapter


stores = pytest.fixture(_provided, name="stores")
blob_store = pytest.fixture(_provided, name="blob_store")
search_index = pytest.fixture(_provided, name="search_index")
vector_cache = pytest.fixture(_provided, name="vector_cache")
index_audit = pytest.fixture(_provided, name="index_audit")
audit_log = pytest.fixture(_provided, name="audit_log")

"""Schemathesis over every operation of the app's OpenAPI document, in process, with a valid admin key.

Each operation gets a few generated requests (valid and invalid); none may answer a server error, and
every answer must be one the document declares (status, content type and schema). Bounded so the whole
module stays well under a minute on two cores; a failing example is printed with a curl to replay it.
"""

from __future__ import annotations

import pytest
import schemathesis
from cairn.api.app import create_app
from cairn.bootstrap import build_container
from cairn.settings import Settings
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLES = 25  # per operation, valid and invalid requests mixed; about 25 operations
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    container = build_container(Settings(mode="local", home=tmp_path_factory.mktemp("fuzz") / "home"))
    _, _, secret = container.keys.create_team("fuzz", "fuzz-admin")
    yield create_app(container), secret
    container.close()


def fuzz(operation, secret: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,  # the same examples every run: a standing test, not a lottery
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE)
        | operation.as_strategy(generation_mode=GenerationMode.NEGATIVE)
    )
    def run(case) -> None:
        case.call_and_validate(headers={"Authorization": f"Bearer {secret}"}, checks=CHECKS)

    run()


def test_no_operation_answers_a_server_error_or_an_undocumented_response(served):
    app, secret = served
    api_schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    operations = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        operations += 1
        try:
            fuzz(operation, secret)
        except Exception as exc:  # one report for every failing operation, not only the first
            failures.append(f"{operation.label}: {exc}")
    assert operations >= 20
    assert not failures, "\n\n".join(failures)

"""The HTTP surface: documented errors and security, offline docs, Allow on 405, 413 on chunked bodies."""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ERROR_STATUSES = {"400", "401", "403", "404", "409", "413", "422"}


def test_every_operation_documents_its_error_responses_with_the_error_schema(api):
    doc = api.get("/openapi.json").json()
    error_schema = doc["components"]["schemas"]["ErrorBody"]
    assert set(error_schema["properties"]) == {"error"}
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            documented = set(op["responses"])
            assert documented >= ERROR_STATUSES, (method, path, documented)
            for status in ERROR_STATUSES:
                schema = op["responses"][status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)


def test_a_validation_error_has_the_documented_error_shape(api, team_a):
    r = api.post("/v1/memories", json={"kind": "nope"}, headers=team_a.headers)
    assert r.status_code == 422
    assert set(r.json()) == {"error"} and set(r.json()["error"]) == {"code", "message", "details"}


def test_bearer_and_x_api_key_are_declared_security_schemes_on_authenticated_operations(api):
    doc = api.get("/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"}.items() <= schemes["HTTPBearer"].items()
    assert {"type": "apiKey", "in": "header", "name": "X-API-Key"}.items() <= schemes["APIKeyHeader"].items()
    assert doc["paths"]["/v1/memories"]["get"]["security"] == [{"HTTPBearer": []}, {"APIKeyHeader": []}]
    assert "security" not in doc["paths"]["/v1/health"]["get"]


def test_docs_load_swagger_ui_from_the_server_itself_never_a_cdn(api):
    page = api.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(a.startswith("/docs/static/") for a in assets), assets
    assert "cdn" not in page.text.lower()
    for asset in assets:
        got = api.get(asset)
        assert got.status_code == 200 and len(got.content) > 0, asset
    assert "SwaggerUIBundle" in api.get("/docs/static/swagger-ui-bundle.js").text
    assert api.get("/docs/static/LICENSE").status_code == 404  # only the page's own files are served
    assert api.get("/redoc").status_code == 404  # FastAPI's redoc page would load from a CDN


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/memories", {"GET", "POST"}),
        ("POST", "/v1/memories/mem_01jx0000000000000000000000", {"GET", "PATCH", "DELETE"}),
        ("DELETE", "/v1/health", {"GET"}),
    ],
)
def test_a_405_names_every_allowed_method_in_its_allow_header(api, method, path, allowed):
    r = api.request(method, path)
    assert r.status_code == 405
    assert allowed <= {m.strip() for m in r.headers["allow"].split(",")}
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_a_chunked_body_over_the_cap_gets_413_not_400(api, team_a):
    def chunks():
        piece = b'{"kind": "fact", "content": "' + b"x" * 65_536
        yield piece
        for _ in range(20):  # 1.3 MB in all, with no Content-Length
            yield b"x" * 65_536
        yield b'"}'

    r = api.post(
        "/v1/memories", content=chunks(), headers={**team_a.headers, "Content-Type": "application/json"}
    )
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "payload_too_large"


def test_a_chunked_import_over_the_cap_gets_413(api, team_a):
    def chunks():
        for _ in range(20):
            yield b"\n" * 65_536

    r = api.post("/v1/admin/import", content=chunks(), headers=team_a.headers)
    assert r.status_code == 413, r.text

"""The request id an audit entry carries: API Gateway's behind the gateway, a client's plain token, or new."""

from __future__ import annotations

import pytest
from cairn.api.request_context import request_id_of
from cairn.domain.audit import AuditAction, current_request, in_request, new_entry
from cairn.domain.models import utcnow

pytestmark = pytest.mark.unit


def test_behind_api_gateway_the_gateways_request_id_is_the_entrys():
    scope = {"aws.event": {"requestContext": {"requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"}}}
    assert request_id_of(scope) == "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"


def test_a_clients_plain_request_id_is_kept_and_anything_else_replaced():
    assert request_id_of({"headers": [(b"x-request-id", b"abc-123")]}) == "abc-123"
    fresh = request_id_of({"headers": [(b"x-request-id", b"<script>\n")]})
    assert fresh.startswith("req_")


def test_an_entry_takes_the_current_requests_id_and_agent_and_outside_one_a_fresh_id():
    with in_request("req-1", agent="codex"):
        inside = new_entry("t", "ana", "key_1", AuditAction.WRITE, "mem_1", utcnow(), agent="other")
    assert (inside.request_id, inside.agent) == ("req-1", "codex")
    outside = new_entry("t", "ana", "key_1", AuditAction.WRITE, "mem_1", utcnow(), agent="gemini-cli")
    assert outside.request_id.startswith("req_") and outside.agent == "gemini-cli"
    assert current_request().request_id != current_request().request_id

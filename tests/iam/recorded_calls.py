"""Which AWS operations each function's code made, and running code as a role with IAM enforced.

`record_calls()` wraps botocore's one entry for every API call (`BaseClient._make_api_call`; PynamoDB
and boto3 both go through it) and notes (role label, signing service, operation, parameters) while a
label is set by `as_role`. `test_template_grants.py` maps each noted operation to the IAM actions AWS
authorises it by and checks them against the template, resources and conditions included: what moto's
enforcement cannot see (KMS calls S3 makes on the caller's behalf, conditions, resources outside S3).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: (role label, signing name, operation, parameters) of every call made under a role
RECORDED: list[tuple[str, str, str, dict[str, Any]]] = []
_current: list[str] = []


@contextmanager
def record_calls() -> Iterator[None]:
    from botocore.client import BaseClient

    original = BaseClient._make_api_call

    def recording(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        if _current:
            RECORDED.append(
                (_current[-1], self.meta.service_model.signing_name, operation_name, dict(api_params))
            )
        return original(self, operation_name, api_params)

    BaseClient._make_api_call = recording  # type: ignore[method-assign]
    try:
        yield
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]


@contextmanager
def as_role(label: str, credentials: dict[str, str], environment: dict[str, str]) -> Iterator[None]:
    """Run as the role (its STS credentials, the function's environment) with every request authorised."""
    import boto3
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    saved = dict(os.environ)  # handlers set Powertools defaults at import: none may leak into other tests
    os.environ.update({**environment, **credentials})
    boto3.setup_default_session()  # the default session caches credentials: drop the previous role's
    before = settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0
    _current.append(label)
    try:
        yield
    finally:
        _current.pop()
        settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count = before
        os.environ.clear()
        os.environ.update(saved)
        boto3.setup_default_session()

"""In AWS the web UI's cookie secret is the stack's generated Secrets Manager secret, read at start-up."""

from __future__ import annotations

import boto3
import pytest
from cairn.bootstrap import _ui_secret_from_aws
from cairn.settings import Settings
from moto import mock_aws

pytestmark = pytest.mark.integration


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield boto3.client("secretsmanager")


def test_the_generated_secret_signs_ui_sessions(aws, tmp_path):
    arn = aws.create_secret(Name="ui", SecretString="s" * 48)["ARN"]
    assert _ui_secret_from_aws(Settings(home=tmp_path, ui_secret_arn=arn)) == b"s" * 48


def test_a_secret_that_cannot_be_read_turns_web_sign_in_off_and_nothing_else(aws, tmp_path):
    missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gone-AbCdEf"
    assert _ui_secret_from_aws(Settings(home=tmp_path, ui_secret_arn=missing)) is None
    assert _ui_secret_from_aws(Settings(home=tmp_path)) is None

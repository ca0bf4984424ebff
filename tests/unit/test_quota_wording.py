"""`Retry-After` read as seconds, and the one wording of an over-quota answer."""

from __future__ import annotations

import pytest
from cairn.capture.quota import last_over_quota, log_hook_event, over_quota_line, retry_after_seconds

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("3600", 3600),
        (" 1 ", 1),
        ("Thu, 26 Nov 2026 00:01:40 GMT", 100),
        ("soon", None),
        (None, None),
        ("", None),
    ],
)
def test_retry_after_is_delta_seconds_or_an_http_date(header, seconds):
    now = 1795651200.0  # Thu, 26 Nov 2026 00:00:00 GMT
    assert retry_after_seconds(header, now=now) == seconds


def test_over_quota_says_when_to_retry_or_later_when_it_cannot():
    assert over_quota_line(30) == "over quota, retry after 30 s"
    assert over_quota_line(None) == "over quota, retry later"


def test_the_hooks_log_keeps_the_latest_over_quota_line_for_a_day(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    assert last_over_quota() is None
    log_hook_event("user-prompt", "no context: over quota, retry after 5 s")
    line = last_over_quota()
    assert line is not None and line.endswith("user-prompt: no context: over quota, retry after 5 s")
    assert last_over_quota(max_age_s=-1) is None

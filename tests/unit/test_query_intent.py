"""What a query asks about time (search.intent): the present state of something, or what happened."""

from __future__ import annotations

import pytest
from cairn.search.intent import asks_present_state

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "query",
    [
        "Is the flaky payments test still failing?",
        "Which host do we deploy to now?",
        "What is the current database URL?",
        "Does the build pass yet?",
        "Are we using Gradle anymore?",
        "What's the latest mix release version?",
        "Which Rust toolchain is currently pinned?",
        "Where do we stand on moving the Elixir app to Fly.io?",
        "What is the status of the Kotlin 2 migration?",
        "Where are we with the flaky e2e suite?",
    ],
)
def test_a_question_about_how_things_stand_today_asks_for_the_present(query):
    assert asks_present_state(query)


@pytest.mark.parametrize(
    "query",
    [
        "Why did the deploy fail on Tuesday?",
        "How do we run the integration tests?",
        "What did we decide about the cache key format?",
        "Which status code does the health check return?",
        "Where did the stand-up notes go?",
        "",
    ],
)
def test_a_question_about_what_happened_or_how_to_does_not(query):
    assert not asks_present_state(query)

"""Which later statement reverses which earlier one (the consolidate stage supersedes on these)."""

from __future__ import annotations

import pytest
from cairn.pipeline.remembering.contradictions import contradicts, stances

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        ("We decided to switch from PostgreSQL to SQLite.", "Let's go with PostgreSQL for the database."),
        ("Don't use mocks in integration tests.", "Use mocks for the payment API."),
        ("Please use pnpm instead of npm.", "Always use npm for installs."),
        ("Let's use npm again.", "Never use npm, we are a pnpm shop."),
        ("We are moving away from Jest.", "We decided to use Jest for unit tests."),
    ],
)
def test_a_reversal_on_the_same_subject_contradicts(later, earlier):
    assert contradicts(later, earlier)


@pytest.mark.parametrize(
    ("later", "earlier"),
    [
        ("Let's use Redis for the job queue.", "Let's go with PostgreSQL for the database."),
        ("Use pnpm for installs.", "Please use pnpm instead of npm."),
        ("I prefer tabs.", "Let's go with FastAPI."),
    ],
)
def test_statements_about_other_subjects_do_not(later, earlier):
    assert not contradicts(later, earlier)


def test_stances_read_for_and_against():
    assert stances("Please use pnpm instead of npm") == {("+", "pnpm"), ("-", "npm")}
    assert stances("Don't use it") == set()

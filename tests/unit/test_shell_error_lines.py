"""Which line of a failed command's output names the error (what episodes and fixes are titled with)."""

from __future__ import annotations

import pytest
from cairn.pipeline.reading.shell import first_error_line


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "E   ModuleNotFoundError: No module named 'httpx'\n1 error in 0.31s",
            "E   ModuleNotFoundError: No module named 'httpx'",
        ),
        (
            "src/a.test.ts(2,33): error TS2307: Cannot find module 'x'.\nFound 1 error.",
            "src/a.test.ts(2,33): error TS2307: Cannot find module 'x'.",
        ),
        (
            "> next build\nTypeError: generate is not a function\n    at foo (a.js:1)",
            "TypeError: generate is not a function",
        ),
        (
            "error[E0425]: cannot find value `x` in this scope",
            "error[E0425]: cannot find value `x` in this scope",
        ),
        ("3 failed, 9 passed in 1.2s", "3 failed, 9 passed in 1.2s"),
        ("npm WARN old lockfile\nsomething odd happened", "something odd happened"),
    ],
)
def test_the_named_error_is_preferred_over_a_runner_summary(output, expected):
    assert first_error_line(output) == expected

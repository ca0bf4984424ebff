"""Where the benchmarks' data lives: inside this repository, so a clean clone runs them on its own.

- LoCoMo dev split (CC BY-NC 4.0, benchmarking only): benchmarks/data/locomo/ (see its LICENSE.md).
- Coding-session questions: benchmarks/data/coding-dev/ (see its SOURCE.md).
- Real agent transcripts, shared with the tests: tests/fixtures/transcripts/ (each folder's SOURCE.md).

None of it is packaged: the wheel holds layers/core only and scripts/build_layer.py copies only that.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / "data"
LOCOMO_DEV = DATA / "locomo" / "locomo-dev.json"
CODING_DEV = DATA / "coding-dev"
TRANSCRIPTS = REPO / "tests" / "fixtures" / "transcripts"
CLAUDE_SESSION = (
    TRANSCRIPTS / "claude-code" / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)

"""Where the tests' data lives: inside this repository, so a clean clone runs the suite on its own.

The real agent transcripts are under tests/fixtures/transcripts/<agent>/<source>/, each folder with the
SOURCE.md that names its origin and licence (see tests/fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"

#: The real Claude Code session most tests learn from (claude-code-viewer, MIT).
CLAUDE_SESSION = (
    TRANSCRIPTS / "claude-code" / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
#: Six real Codex rollouts, free text sanitised upstream (madshn/localpush, MIT).
CODEX_LOCALPUSH = TRANSCRIPTS / "codex" / "localpush"
#: Two Gemini CLI 0.61.0 sessions produced here with the real CLI against a scripted model (see SOURCE.md).
GEMINI_CAPTURE = TRANSCRIPTS / "gemini-cli" / "cairn-capture"

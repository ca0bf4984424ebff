"""Sub-agent transcripts that belong to a session: Claude Code keeps each sub-agent's conversation in
`<session>/subagents/*.jsonl` beside the session's own `<session>.jsonl`.

They are uploaded as further parts of the same session (after the main transcript's part), so the
pipeline learns a sub-agent's findings with the session that asked for them.
"""

from __future__ import annotations

from pathlib import Path

SUBAGENTS = "subagents"


def subagent_files(transcript: Path) -> list[Path]:
    """The session's sub-agent transcripts, in a stable order; none for a transcript without them."""
    folder = transcript.with_suffix("") / SUBAGENTS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file())


def session_transcript(folder: Path) -> Path | None:
    """The main transcript of a session folder (`<session>/` holding `subagents/`): `<session>.jsonl`."""
    main = folder.parent / f"{folder.name}.jsonl"
    return main if main.is_file() else None

"""Whether a transcript event calls one of a set of tools (`cairn.transcripts.tools` names them)."""

from __future__ import annotations

from cairn.pipeline.models import EventDoc
from cairn.transcripts.model import Role


def calls_tool(event: EventDoc, names: frozenset[str]) -> bool:
    """A tool call of one of `names` (lower-cased)."""
    return event.role is Role.TOOL_CALL and (event.tool_name or "").lower() in names

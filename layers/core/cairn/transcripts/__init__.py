"""Transcript capture for the learning pipeline: parse, filter noise, chunk.

`parse_transcript(bytes)` turns a Claude Code, Codex, Gemini CLI, OpenCode or Copilot CLI transcript
into `ParsedTranscript` events; `chunk_events` cuts them into ~24 KB chunks on turn boundaries for extraction.
"""

from cairn.transcripts.chunking import Chunk, chunk_events
from cairn.transcripts.detect import detect_agent, normalise_agent, parse_transcript
from cairn.transcripts.lines import MAX_TRANSCRIPT_BYTES
from cairn.transcripts.model import ParsedTranscript, ParseStats, Role, TranscriptEvent
from cairn.transcripts.noise import CAIRN_CONTEXT_CLOSE, CAIRN_CONTEXT_OPEN

__all__ = [
    "CAIRN_CONTEXT_CLOSE",
    "CAIRN_CONTEXT_OPEN",
    "MAX_TRANSCRIPT_BYTES",
    "Chunk",
    "ParseStats",
    "ParsedTranscript",
    "Role",
    "TranscriptEvent",
    "chunk_events",
    "detect_agent",
    "normalise_agent",
    "parse_transcript",
]

"""A fake model server on 127.0.0.1 for the real agent CLIs (tests/agents): one server, four wire formats.

Each provider module turns a request body into a `Turn` (the tools offered, whether the last message is a
tool result) and a `Reply` into that provider's streamed (SSE) or plain JSON answer:

- `anthropic`: Anthropic Messages (`POST /v1/messages`, Claude Code)
- `responses`: OpenAI Responses (`POST /v1/responses`, Codex CLI)
- `gemini`: Gemini `generateContent` / `streamGenerateContent` (Gemini CLI)
- `chat`: OpenAI-compatible chat completions (`POST /v1/chat/completions`, OpenCode)

The server records every request and answers from a small script: a scripted tool call is made the first
time a request offers that tool (and is not already answering a tool result); everything else gets a short
text reply.
"""

from tests.fakes.models.server import FakeModelServer, Recorded, Reply, ToolCall

__all__ = ["FakeModelServer", "Recorded", "Reply", "ToolCall"]

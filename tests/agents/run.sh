#!/usr/bin/env bash
# The real-agent tier (opt-in, marker `agents`): Claude Code, Codex CLI, Gemini CLI, OpenCode and GitHub
# Copilot CLI at their pinned versions, installed from the npm registry into ~/.cache/cairn-agents (CAIRN_AGENTS_CACHE) on first
# use, each run headless against tests/fakes/models and a real `cairn serve`. The tests skip, saying why,
# only when a CLI is not cached and the registry cannot be reached. Run from anywhere: tests/agents/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-.venv/bin/python}"
exec "$PY" -m pytest -n 0 tests/agents -m agents -q -p no:cacheprovider "$@"

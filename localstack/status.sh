#!/usr/bin/env bash
# Endpoint, running services and memory of the emulated AWS stack.
set -euo pipefail
exec python3 "$(dirname "$0")/stack.py" status "$@"

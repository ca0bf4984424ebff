#!/usr/bin/env bash
# Stop every process localstack/up.sh started.
set -euo pipefail
exec python3 "$(dirname "$0")/stack.py" down "$@"

#!/usr/bin/env bash
# Start the emulated AWS stack (LocalStack + osmem-server) on 127.0.0.1; see localstack/README.md.
set -euo pipefail
exec python3 "$(dirname "$0")/stack.py" up "$@"

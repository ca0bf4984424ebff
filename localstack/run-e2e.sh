#!/usr/bin/env bash
# Bring the emulated AWS stack up, run the e2e suite against it, always bring it down; exits with pytest's code.
# Extra arguments go to pytest (e.g. -k presigned). PYTHON picks the interpreter that runs pytest.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
python="${PYTHON:-$repo/.venv/bin/python}"

python3 "$here/stack.py" up || { python3 "$here/stack.py" down; exit 1; }
trap 'python3 "$here/stack.py" down' EXIT
(cd "$repo" && "$python" -m pytest -m e2e tests/e2e "$@")

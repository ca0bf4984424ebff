#!/usr/bin/env bash
# The whole e2e run in one command: bring the emulated AWS stack up, deploy Cairn-local (the CDK template) to
# it, run the e2e suite, always bring it down; exits with pytest's code (1 if bring-up or deploy failed).
# Extra arguments go to pytest (e.g. -k malformed). PYTHON picks the interpreter that runs deploy and pytest
# (it needs the project's dev extra: aws-cdk-lib, boto3, mcp).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
python="${PYTHON:-$repo/.venv/bin/python}"

python3 "$here/stack.py" up || { python3 "$here/stack.py" down; exit 1; }
trap 'python3 "$here/stack.py" down' EXIT
(cd "$repo" && "$python" localstack/deploy.py) || exit 1
(cd "$repo" && "$python" -m pytest -n 0 -m e2e tests/e2e "$@")

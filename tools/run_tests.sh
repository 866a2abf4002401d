#!/usr/bin/env bash
# Set up, then run the whole test suite: lit (MLIR-style regression tests) and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
lit -sv test
python -m pytest -q test/python "$@"

#!/usr/bin/env bash
# Set up, then run the whole test suite: lit (MLIR-style regression tests) and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
lit -sv test
# The 14 judged models (tens of minutes with their generation) run separately:
#   python -m pytest -q test/python/models
python -m pytest -q test/python --ignore=test/python/models "$@"

#!/usr/bin/env bash
# Set up, then run the whole test suite: lit (MLIR-style regression tests) and pytest
# (ops, dialect, ONNX conformance, the 14 judged models). The judged models are derived
# once into ~/.cache/dnnf-mlir/models-KEY (or $DNNF_MODELS); the first run takes ~5 min more.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
lit -sv test
python -m pytest -q test/python "$@"

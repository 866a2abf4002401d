#!/usr/bin/env bash
# Create .venv (if needed) and install dnnf-mlir with its test and model-export extras.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
pip install -q --disable-pip-version-check --upgrade pip
# torch 2.13.0 (CPU) must be installed before transformers so that no CUDA build is pulled in.
pip install -q --disable-pip-version-check torch==2.13.0
pip install -q --disable-pip-version-check -e '.[test,models]'

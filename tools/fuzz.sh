#!/usr/bin/env bash
# Differential fuzzing: tools/fuzz.sh N [--workers W] [--seed S] [--out DIR] checks N random
# ONNX graphs (onnxruntime, the interpreter, ecg-rewrite, every fusion mode, compiled host
# code on 1 and 2 threads), with a progress bar and a summary (graphs, ops covered, failures
# by kind). Failing graphs, shrunk, are saved in DIR (default build/fuzz) as .onnx files;
# `python -m dnnf_mlir.fuzz replay FILE` re-checks one, and a copy in
# test/python/fuzz/regressions/ makes it a regression test. With --target vulkan or
# --target opencl the graphs are compiled for that GPU target in fp32 and compared with
# onnxruntime instead (replay takes --target too; GPU regressions go in test/python/gpu/).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
exec python -m dnnf_mlir.fuzz run "${1:-1000}" "${@:2}"
